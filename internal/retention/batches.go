package retention

import (
	"context"

	"github.com/google/uuid"
)

// inBatches walks ids in keyset order from after start: list answers up
// to BatchSize ids after a given one, each listing is a step of phase (counted n = 0, 1,
// ...), and each id it answers is handed to each in order. It stops at the
// first error or at a batch shorter than BatchSize.
func (s *Service) inBatches(ctx context.Context, phase string, start uuid.UUID,
	list func(ctx context.Context, after uuid.UUID) ([]uuid.UUID, error),
	each func(id uuid.UUID) error) error {
	after := start
	for n := 0; ; n++ {
		var ids []uuid.UUID
		err := s.step(ctx, phase, n, func(sctx context.Context) error {
			var err error
			ids, err = list(sctx, after)
			return err
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := each(id); err != nil {
				return err
			}
		}
		if len(ids) < s.cfg.BatchSize {
			return nil
		}
		after = ids[len(ids)-1]
	}
}
