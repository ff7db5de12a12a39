package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// lossSoon is how close a group must be to losing unread messages for the
// doctor to warn.
const lossSoon = time.Hour

// lossListed bounds the groups a warning names.
const lossListed = 5

// checkLoss: the one deletion lethe makes of data someone still needs is
// a retentionSeconds or maxWaitTimeSeconds window passing over messages a
// group has not read. The doctor names the groups whose time to loss (the
// view lethe.group_loss, migration 155) is within lossSoon.
func checkLoss(ctx context.Context, q Querier, cfg Config) (string, string, string, error) {
	rows, err := q.Query(ctx, `
		SELECT queue_name, group_name, min(loss_at) AS at, max(loss_rule), count(*) OVER ()
		  FROM lethe.group_loss
		 WHERE loss_at IS NOT NULL
		 GROUP BY queue_name, group_name
		HAVING min(loss_at) < $1
		 ORDER BY at, queue_name, group_name
		 LIMIT $2`, cfg.Now.Add(lossSoon), lossListed)
	if err != nil {
		return "", "", "", fmt.Errorf("read the consumer groups' time to loss: %w", err)
	}
	defer rows.Close()
	var soon []string
	total := 0
	for rows.Next() {
		var queue, group, rule string
		var at time.Time
		if err := rows.Scan(&queue, &group, &at, &rule, &total); err != nil {
			return "", "", "", fmt.Errorf("read the consumer groups' time to loss: %w", err)
		}
		when := "now (the next cycle deletes)"
		if left := at.Sub(cfg.Now); left > 0 {
			when = "in " + left.Round(time.Second).String()
		}
		if group == api.QueueModeGroup {
			group = "(queue mode)"
		}
		soon = append(soon, fmt.Sprintf("%s/%s %s by %s", queue, group, when, rule))
	}
	if err := rows.Err(); err != nil {
		return "", "", "", fmt.Errorf("read the consumer groups' time to loss: %w", err)
	}
	if total == 0 {
		return api.DoctorOK, fmt.Sprintf("no consumer group loses messages it has not read within the next %s (each group's time to loss: lethe lag)", lossSoon), "", nil
	}
	more := ""
	if total > len(soon) {
		more = fmt.Sprintf(", and %d more", total-len(soon))
	}
	return api.DoctorWarn, fmt.Sprintf("%d consumer group(s) lose messages they have not read within %s: %s%s",
			total, lossSoon, strings.Join(soon, "; "), more),
		"add consumers to those groups, or lengthen the queue's retentionSeconds or maxWaitTimeSeconds (lethe queue configure); `lethe lag` shows every group's TIME-TO-LOSS", nil
}
