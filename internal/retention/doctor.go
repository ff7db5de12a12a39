package retention

import (
	"context"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/doctor"
)

// Doctor checks the database this replica serves against the checkpoints
// of trustworthy retention (package doctor), with this replica's settings
// and clock.
func (s *Service) Doctor(ctx context.Context) *api.DoctorReport {
	return doctor.Run(ctx, s.pool, doctor.Config{
		Now:                  s.cfg.Clock.Now(),
		Interval:             s.cfg.Interval,
		BatchSize:            s.cfg.BatchSize,
		MetricsRetentionDays: s.cfg.MetricsRetentionDays,
		KeepPartitions:       s.cfg.KeepPartitions,
	})
}
