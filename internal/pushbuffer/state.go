package pushbuffer

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Keys in lethe.settings; each value is {"enabled": bool}, as Queen keeps
// its maintenance flag.
const (
	pushKey = "maintenance.push"
	popKey  = "maintenance.pop"
)

// flags is the shared maintenance state.
type flags struct {
	push bool // pushes go to the local buffer
	pop  bool // pops answer empty
}

// readFlags reads both switches in one query; a missing row, or a value
// without a boolean "enabled", reads as off.
func readFlags(ctx context.Context, pool *pgxpool.Pool) (flags, error) {
	rows, err := pool.Query(ctx, `
		SELECT key, coalesce(value->'enabled' = 'true'::jsonb, false)
		  FROM lethe.settings WHERE key = ANY($1)`, []string{pushKey, popKey})
	if err != nil {
		return flags{}, fmt.Errorf("read maintenance mode: %w", err)
	}
	defer rows.Close()
	var f flags
	for rows.Next() {
		var key string
		var on bool
		if err := rows.Scan(&key, &on); err != nil {
			return flags{}, fmt.Errorf("read maintenance mode: %w", err)
		}
		switch key {
		case pushKey:
			f.push = on
		case popKey:
			f.pop = on
		}
	}
	if err := rows.Err(); err != nil {
		return flags{}, fmt.Errorf("read maintenance mode: %w", err)
	}
	return f, nil
}

// writeFlag stores one switch for every replica to see.
func writeFlag(ctx context.Context, pool *pgxpool.Pool, key string, enabled bool, now time.Time) error {
	_, err := pool.Exec(ctx, `
		INSERT INTO lethe.settings (key, value, updated_at)
		VALUES ($1, jsonb_build_object('enabled', $2::bool), $3)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
		key, enabled, now)
	if err != nil {
		return fmt.Errorf("set %s: %w", key, err)
	}
	return nil
}
