package pushbuffer

import "github.com/prometheus/client_golang/prometheus"

// Collectors are the maintenance gauges, read at scrape time, for the
// replica's metrics registry.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lethe_maintenance_push_enabled",
			Help: "1 while push maintenance is on as this replica sees it: pushes go to its local buffer.",
		}, func() float64 { return boolGauge(s.push.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lethe_maintenance_pop_enabled",
			Help: "1 while pop maintenance is on as this replica sees it: pops answer empty.",
		}, func() float64 { return boolGauge(s.pop.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lethe_maintenance_buffered_messages",
			Help: "Messages in this replica's maintenance buffer, not yet replayed.",
		}, func() float64 { return float64(s.buf.count()) }),
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
