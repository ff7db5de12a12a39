package stack

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux the bench runs on.
const userHZ = 100

// CPUSample is the CPU time used so far by lethe, PostgreSQL (every
// process named postgres), the bench itself and everything else.
type CPUSample struct {
	at                             time.Time
	lethe, postgres, bench, others int64 // clock ticks
}

// SampleCPU reads the CPU time of every process; lethePID 0 (lethe not
// local) or the bench's own pid (lethe in process) counts lethe with the
// bench.
func SampleCPU(lethePID int) CPUSample {
	s := CPUSample{at: time.Now()}
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ticks, ok := procTicks(pid)
		if !ok {
			continue // gone meanwhile
		}
		switch {
		case pid == self:
			s.bench += ticks
		case pid == lethePID:
			s.lethe += ticks
		case comm == "postgres":
			s.postgres += ticks
		default:
			s.others += ticks
		}
	}
	return s
}

// procTicks answers a process's name and utime + stime.
func procTicks(pid int) (string, int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	stat := string(b)
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return stat[open+1 : end], utime + stime, true
}

// CoresFrom samples the CPU use of every process from the time from on
// (a measured window's start, possibly still ahead); the function it
// answers ends the window and reads it.
func CoresFrom(lethePID int, from time.Time) func() Cores {
	start := make(chan CPUSample, 1)
	go func() {
		time.Sleep(time.Until(from))
		start <- SampleCPU(lethePID)
	}()
	return func() Cores {
		end := SampleCPU(lethePID)
		return end.CoresSince(<-start)
	}
}

// Cores is CPU seconds per second of wall over a window, by process group.
// A process that exited during the window is missing from it.
type Cores struct {
	Lethe, Postgres, Bench, Others float64
}

// Total is every core-second a second.
func (c Cores) Total() float64 { return c.Lethe + c.Postgres + c.Bench + c.Others }

// CoresSince is what ran between an earlier sample and this one.
func (s CPUSample) CoresSince(earlier CPUSample) Cores {
	wall := s.at.Sub(earlier.at).Seconds()
	if wall <= 0 {
		return Cores{}
	}
	per := func(now, then int64) float64 { return float64(now-then) / userHZ / wall }
	return Cores{
		Lethe:    per(s.lethe, earlier.lethe),
		Postgres: per(s.postgres, earlier.postgres),
		Bench:    per(s.bench, earlier.bench),
		Others:   per(s.others, earlier.others),
	}
}

// String reads as "cores busy: lethe 0.41, PostgreSQL 0.88, load generator
// 0.22, other 0.03 (1.54 of 2)".
func (c Cores) String(ncpu int) string {
	return fmt.Sprintf("cores busy: lethe %.2f, PostgreSQL %.2f, load generator %.2f, other %.2f (%.2f of %d)",
		c.Lethe, c.Postgres, c.Bench, c.Others, c.Total(), ncpu)
}

// Note is String and PerMessage together, as a throughput row's notes end.
func (c Cores) Note(ncpu int, rate float64) string {
	return c.String(ncpu) + "; " + c.PerMessage(rate)
}

// PerMessage reads as "CPU per message: lethe 12 µs, PostgreSQL 30 µs, load
// generator 5 µs, all 49 µs": the window's core-seconds divided by the
// messages it moved at rate a second. On saturated cores a throughput ratio
// is the inverse of these totals' ratio, so they say whose work to cut.
func (c Cores) PerMessage(rate float64) string {
	if rate <= 0 {
		return "CPU per message: no messages"
	}
	us := func(cores float64) float64 { return cores / rate * 1e6 }
	return fmt.Sprintf("CPU per message: lethe %.0f µs, PostgreSQL %.0f µs, load generator %.0f µs, all %.0f µs",
		us(c.Lethe), us(c.Postgres), us(c.Bench), us(c.Total()))
}
