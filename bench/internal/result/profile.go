package result

// Profile is what -profile found over one measured window: lethe's CPU and
// heap, and PostgreSQL's statements (pg_stat_statements). The txt named by
// File holds the full tables; this is the compact part results.md and
// results.json carry.
type Profile struct {
	File string `json:"file"` // the detail, relative to the out folder
	// Seconds is the wall time the CPU profile covered: the measured
	// window rounded up to whole seconds.
	Seconds      float64       `json:"seconds"`
	CPUSeconds   float64       `json:"lethe_cpu_seconds,omitempty"`
	CPUPerSecond float64       `json:"lethe_cpu_per_second,omitempty"`
	TopFlat      []ProfileFunc `json:"lethe_top_flat,omitempty"`    // the 5 hottest functions by flat
	TopOwnCum    []ProfileFunc `json:"lethe_top_own_cum,omitempty"` // lethe's own 3 by cum
	HeapInuseMiB float64       `json:"lethe_heap_inuse_mib,omitempty"`
	PeakRSSMiB   float64       `json:"lethe_peak_rss_mib,omitempty"`
	// PGExecMs is the execution time of the top-level statements of the
	// database (the nested ones are inside it); PGCalls counts them.
	PGExecMs   float64            `json:"pg_exec_ms"`
	PGCalls    int64              `json:"pg_calls"`
	Statements []ProfileStatement `json:"pg_top_statements,omitempty"` // the 3 costliest
	Cost       *PushCost          `json:"push_cost,omitempty"`
	Problems   []string           `json:"problems,omitempty"` // what could not be captured, and why
}

// ProfileFunc is one function's share of the profile's total.
type ProfileFunc struct {
	Name    string  `json:"name"`
	Percent float64 `json:"percent"`
}

// ProfileStatement is one pg_stat_statements row. Share is its
// total_exec_time over the top-level total; a nested statement (one run
// inside lethe.append) is also inside its caller's share.
type ProfileStatement struct {
	Query    string  `json:"query"`
	TopLevel bool    `json:"toplevel"`
	Calls    int64   `json:"calls"`
	TotalMs  float64 `json:"total_ms"`
	MeanMs   float64 `json:"mean_ms"`
	Share    float64 `json:"share_of_exec_pct"`
}

// PushCost is what one push costs, from the profile of its window: lethe's
// CPU and PostgreSQL's execution time per request and per message, beside
// what the matching ceiling of the same run paid per row it wrote.
type PushCost struct {
	Messages             int64   `json:"messages"`
	Requests             int64   `json:"requests"`
	LetheCPUMicrosPerMsg float64 `json:"lethe_cpu_us_per_msg,omitempty"`
	LetheCPUMicrosPerReq float64 `json:"lethe_cpu_us_per_request,omitempty"`
	PGExecMicrosPerMsg   float64 `json:"pg_exec_us_per_msg"`
	PGExecMicrosPerReq   float64 `json:"pg_exec_us_per_request"`
	Ceiling              string  `json:"ceiling,omitempty"` // its Key
	// CeilingMicrosPerRow is the ceiling's PostgreSQL execution time per
	// row; a row holds CeilingMsgsPerRow messages (1 for one INSERT per
	// message, 100 for segment rows).
	CeilingMicrosPerRow float64 `json:"ceiling_pg_exec_us_per_row,omitempty"`
	CeilingMicrosPerMsg float64 `json:"ceiling_pg_exec_us_per_msg,omitempty"`
	CeilingMsgsPerRow   int     `json:"ceiling_msgs_per_row,omitempty"`
}
