package profiling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// OwnPrefix starts the names of lethe's own functions.
const OwnPrefix = "github.com/lethe-mq/lethe/"

// Func is one function's line of a top table, in the unit of the sample
// type it was read from (CPU: nanoseconds; heap: bytes).
type Func struct {
	Name string
	Flat int64 // in samples whose innermost frame is this function
	Cum  int64 // in samples with this function anywhere on the stack
}

// Top is one sample type of a profile, summed by function, as
// `go tool pprof -top` does at its default (function) granularity.
type Top struct {
	Unit  string
	Total int64
	Funcs []Func
	// handoff[f][g] is the value of the samples in which g is the next
	// function of lethe's own inward from f (f's own callee, directly or
	// through library code).
	handoff map[string]map[string]int64
}

// TopOf sums sample type typ ("cpu", "inuse_space", ...) of p by function:
// a sample's value is flat for its innermost function (the first line of
// its first location, which is the innermost of an inlined chain) and cum
// for every function on its stack, once per sample even when it recurses.
func TopOf(p *profile.Profile, typ string) (Top, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == typ {
			idx = i
		}
	}
	if idx < 0 {
		return Top{}, fmt.Errorf("the profile has no %q samples (it has %s)", typ, sampleTypes(p))
	}
	t := Top{Unit: p.SampleType[idx].Unit, handoff: map[string]map[string]int64{}}
	byName := map[string]*Func{}
	get := func(name string) *Func {
		f, ok := byName[name]
		if !ok {
			f = &Func{Name: name}
			byName[name] = f
		}
		return f
	}
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v == 0 {
			continue
		}
		t.Total += v
		seen := map[string]bool{}
		var own []string // lethe's functions on the stack, innermost first, once each
		for i, loc := range s.Location {
			for j, name := range frameNames(loc) {
				if i == 0 && j == 0 {
					get(name).Flat += v
				}
				if !seen[name] {
					seen[name] = true
					get(name).Cum += v
					if strings.HasPrefix(name, OwnPrefix) {
						own = append(own, name)
					}
				}
			}
		}
		t.addHandoffs(own, v)
	}
	for _, f := range byName {
		t.Funcs = append(t.Funcs, *f)
	}
	return t, nil
}

func (t *Top) addHandoffs(own []string, v int64) {
	for i := 1; i < len(own); i++ {
		outer, inner := own[i], own[i-1]
		if t.handoff[outer] == nil {
			t.handoff[outer] = map[string]int64{}
		}
		t.handoff[outer][inner] += v
	}
}

// frameNames are the functions of one location, innermost first; an
// unsymbolized location is named by its address.
func frameNames(loc *profile.Location) []string {
	if len(loc.Line) == 0 {
		return []string{fmt.Sprintf("0x%x", loc.Address)}
	}
	out := make([]string, 0, len(loc.Line))
	for _, l := range loc.Line {
		if l.Function != nil {
			out = append(out, l.Function.Name)
		}
	}
	return out
}

func sampleTypes(p *profile.Profile) string {
	var names []string
	for _, st := range p.SampleType {
		names = append(names, st.Type)
	}
	return strings.Join(names, ", ")
}

// ByFlat is the n functions with the most flat, then by name.
func (t Top) ByFlat(n int) []Func {
	return t.first(n, func(f Func) int64 { return f.Flat }, "")
}

// ByCum is the n functions with the most cum whose names start with
// prefix ("" for all).
func (t Top) ByCum(n int, prefix string) []Func {
	return t.first(n, func(f Func) int64 { return f.Cum }, prefix)
}

// passThrough is the share of its cum a function must hand to a single
// function of lethe's own to be left out of OwnByCum.
const passThrough = 0.9

// OwnByCum is the n functions of lethe's own with the most cum, leaving out
// the pass-throughs: a function that hands at least 90% of its cum to one
// other function of lethe's (an HTTP middleware, a goroutine's wrapper) is
// represented by that one, so the list names where lethe's work divides
// rather than the chain of wrappers above it.
func (t Top) OwnByCum(n int) []Func {
	var out []Func
	for _, f := range t.ByCum(len(t.Funcs), OwnPrefix) {
		if !t.passesThrough(f) {
			out = append(out, f)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

func (t Top) passesThrough(f Func) bool {
	for _, v := range t.handoff[f.Name] {
		if float64(v) >= passThrough*float64(f.Cum) {
			return true
		}
	}
	return false
}

func (t Top) first(n int, key func(Func) int64, prefix string) []Func {
	var out []Func
	for _, f := range t.Funcs {
		if strings.HasPrefix(f.Name, prefix) && key(f) > 0 {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b Func) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), strings.Compare(a.Name, b.Name))
	})
	return out[:min(n, len(out))]
}

// Percent is v as a percentage of the total.
func (t Top) Percent(v int64) float64 {
	if t.Total == 0 {
		return 0
	}
	return 100 * float64(v) / float64(t.Total)
}

// ShortName drops lethe's module path from a function name, so a table
// reads internal/engine.(*Log).append rather than the full path.
func ShortName(name string) string {
	return strings.TrimPrefix(name, OwnPrefix)
}
