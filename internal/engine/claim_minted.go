package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// claim is where a pushed id lethe minted says its message is.
type claim struct {
	pid    uuid.UUID
	offset int64
}

// claimMinted finds, before anything is written, the items whose producer
// sent an id in the form lethe mints for the partition the item names
// (store.MintedID: a client pushing again what a push answered). Such an id
// names an offset, so the item is a duplicate of the message there when that
// offset was given, and refused when it was not: the form is lethe's, and
// storing it as a producer's id could give two messages of a partition one
// id. In any other partition it is an ordinary producer id. The partitions
// are read from the database, once per partition named by such an id, not
// from the catalog's cache: a cached id may be of a partition deleted since.
func (e *Engine) claimMinted(ctx context.Context, prep []prepared) error {
	type head struct {
		pid    uuid.UUID
		next   int64
		exists bool
	}
	heads := map[partKey]head{}
	for i := range prep {
		p := &prep[i]
		if p.minted || !store.MintedForm(p.item.TransactionID) {
			continue
		}
		k := partKey{p.item.Queue, p.item.Partition}
		h, ok := heads[k]
		if !ok {
			var err error
			h.pid, h.next, err = store.PartitionHead(ctx, e.pool, k.queue, k.partition)
			switch {
			case err == nil:
				h.exists = true
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("look up partition %s/%s: %w", k.queue, k.partition, err)
			}
			heads[k] = h // a new partition: none of its ids was given yet
		}
		off, mine := store.MintedOffset(h.pid, p.item.TransactionID)
		if !h.exists || !mine {
			continue // another partition's id, or a producer's own UUIDv8
		}
		if off >= h.next {
			return invalidf("items[%d].transactionId %q is the id lethe gives offset %d of partition %q of queue %q, "+
				"which no message has yet; ids of this form are lethe's (push without a transactionId to have one given)",
				p.index, p.item.TransactionID, off, p.item.Partition, p.item.Queue)
		}
		p.claimed = &claim{pid: h.pid, offset: off}
	}
	return nil
}

// fillClaimed answers the claimed items of prep as duplicates of the
// messages their ids name.
func fillClaimed(results []api.PushResult, prep []prepared) {
	for _, p := range prep {
		if c := p.claimed; c != nil {
			results[p.index] = pushResult(p.index, p.item, p.item.TransactionID, api.StatusDuplicate, c.pid, c.offset)
		}
	}
}
