package streams

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// queryer is a pool or a transaction.
type queryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkLive answers an error unless id is a live registration: not found
// when it never was one, conflict when it was reset or removed. lock takes
// the row FOR SHARE, so a reset waits for the cycle holding it.
func checkLive(ctx context.Context, q queryer, id uuid.UUID, lock bool) error {
	sql := `SELECT name, coalesce(retired_why, '') FROM lethe.stream_queries WHERE id = $1`
	if lock {
		sql += ` FOR SHARE`
	}
	var name, why string
	err := q.QueryRow(ctx, sql, id).Scan(&name, &why)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return apierr.Field(apierr.NotFound, "query_id", "no streaming query has query_id %s; register it with POST /streams/v1/queries", id)
	case err != nil:
		return fmt.Errorf("streams: look up query %s: %w", id, err)
	case why == "reset":
		return apierr.Field(apierr.Conflict, "query_id", "query_id %s of %q was reset by a newer registration; "+
			"register the query again for its current query_id", id, name)
	case why != "":
		return apierr.Field(apierr.Conflict, "query_id", "query %q (query_id %s) was removed; its state is being purged", name, id)
	}
	return nil
}

// checkPartition answers not found, naming partition_id, unless the
// source partition exists. lock takes its row FOR KEY SHARE, so a cycle's
// partition is not deleted before the cycle commits (appends, which only
// update the row, do not wait for it).
func checkPartition(ctx context.Context, q queryer, id uuid.UUID, lock bool) error {
	sql := `SELECT true FROM lethe.partitions WHERE id = $1`
	if lock {
		sql += ` FOR KEY SHARE`
	}
	var found bool
	err := q.QueryRow(ctx, sql, id).Scan(&found)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return apierr.Field(apierr.NotFound, "partition_id", "partition %s does not exist; "+
			"partition_id must be the partitionId of a message popped from the query's source queue", id)
	case err != nil:
		return fmt.Errorf("streams: look up partition %s: %w", id, err)
	}
	return nil
}

// parseIDs parses a request's query and partition ids.
func parseIDs(queryID, partitionID string) (uuid.UUID, uuid.UUID, error) {
	q, err := uuid.Parse(queryID)
	if err != nil {
		return q, q, apierr.Field(apierr.Invalid, "query_id", "query_id %q is not a query id (the query_id POST /streams/v1/queries answered)", queryID)
	}
	p, err := uuid.Parse(partitionID)
	if err != nil {
		return q, p, apierr.Field(apierr.Invalid, "partition_id", "partition_id %q is not a partition id (the partitionId of a popped message)", partitionID)
	}
	return q, p, nil
}
