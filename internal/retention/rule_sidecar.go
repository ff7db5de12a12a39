package retention

import "context"

// ruleSidecar purges the transaction-id hash sidecar: every cycle, leaves
// ahead are made and each leaf older than every queue's sidecar window is
// dropped whole. It writes no history row; the cycle's record counts the
// hashes.
type ruleSidecar struct{ rule }

var sidecarRule = ruleSidecar{rule{name: PhaseTxns, phase: PhaseTxns,
	options: []string{"dedupWindowSeconds", "completedRetentionSeconds"},
	due:     "lethe.leaves: the sidecar's leaves whose range ended before now minus lethe.sidecar_window()",
	bound: "between H and H + one sidecar partition + I after the push, H the largest " +
		"GREATEST(dedupWindowSeconds, completedRetentionSeconds, 900 s) of any queue"}}

func (ruleSidecar) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.sidecarPhase(ctx, c.conn, c.now, c.res)
	}
}
