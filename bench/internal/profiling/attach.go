package profiling

import (
	"path"

	"github.com/lethe-mq/lethe/bench/internal/result"
)

// How much of each window the results carry (the txt has the rest).
const (
	summaryFlat       = 5
	summaryOwnCum     = 3
	summaryStatements = 3
)

// Attach sets the Profile of every result whose window was recorded and,
// for pushes, what a request and a message cost beside what the matching
// ceiling of the same run paid per row.
func (p *Profiler) Attach(results []result.Result) {
	p.mu.Lock()
	for i := range results {
		if rec, ok := p.found[results[i].Key]; ok {
			s := rec.summary()
			results[i].Profile = &s
		}
	}
	p.mu.Unlock()
	byKey := map[string]*result.Result{}
	for i := range results {
		byKey[results[i].Key] = &results[i]
	}
	for i := range results {
		r := &results[i]
		if r.Profile != nil && (r.Scenario == "push" || r.Scenario == "encrypt-push") {
			r.Profile.Cost = PushCost(*r, byKey[r.Ceiling])
		}
	}
}

// PushCost divides a push window's lethe CPU and PostgreSQL execution time
// by the messages and requests it counted, and the ceiling's (nil: not
// measured) execution time by its rows. Nil when nothing was counted.
func PushCost(r result.Result, ceiling *result.Result) *result.PushCost {
	if r.Profile == nil || r.Count <= 0 {
		return nil
	}
	msgs := float64(r.Count)
	reqs := msgs / float64(max(1, r.Batch))
	c := &result.PushCost{
		Messages: r.Count, Requests: int64(reqs),
		LetheCPUMicrosPerMsg: r.Profile.CPUSeconds * 1e6 / msgs,
		LetheCPUMicrosPerReq: r.Profile.CPUSeconds * 1e6 / reqs,
		PGExecMicrosPerMsg:   r.Profile.PGExecMs * 1e3 / msgs,
		PGExecMicrosPerReq:   r.Profile.PGExecMs * 1e3 / reqs,
	}
	if ceiling == nil || ceiling.Profile == nil || ceiling.Count <= 0 {
		return c
	}
	perRow := max(1, ceiling.Batch)
	c.Ceiling, c.CeilingMsgsPerRow = ceiling.Key, perRow
	c.CeilingMicrosPerMsg = ceiling.Profile.PGExecMs * 1e3 / float64(ceiling.Count)
	c.CeilingMicrosPerRow = c.CeilingMicrosPerMsg * float64(perRow)
	return c
}

// summary is the compact part of the record.
func (r *record) summary() result.Profile {
	s := result.Profile{File: path.Join(Dir, r.name+".txt"), Seconds: r.seconds,
		PeakRSSMiB: float64(r.peakRSS) / (1 << 20), Problems: r.problems}
	if r.cpu != nil {
		s.CPUSeconds = float64(r.cpu.Total) / 1e9
		s.CPUPerSecond = perSecond(s.CPUSeconds, r.seconds)
		for _, f := range r.cpu.ByFlat(summaryFlat) {
			s.TopFlat = append(s.TopFlat, result.ProfileFunc{Name: ShortName(f.Name), Percent: r.cpu.Percent(f.Flat)})
		}
		for _, f := range r.cpu.OwnByCum(summaryOwnCum) {
			s.TopOwnCum = append(s.TopOwnCum, result.ProfileFunc{Name: ShortName(f.Name), Percent: r.cpu.Percent(f.Cum)})
		}
	}
	if r.heap != nil {
		s.HeapInuseMiB = float64(r.heap.Total) / (1 << 20)
	}
	if r.pg != nil {
		s.PGExecMs, s.PGCalls = r.pg.ExecMs, r.pg.Calls
		for _, st := range r.pg.Top[:min(summaryStatements, len(r.pg.Top))] {
			s.Statements = append(s.Statements, result.ProfileStatement{Query: Query(st.Query), TopLevel: st.TopLevel,
				Calls: st.Calls, TotalMs: st.TotalMs, MeanMs: st.MeanMs, Share: share(st.TotalMs, r.pg.ExecMs)})
		}
	}
	return s
}
