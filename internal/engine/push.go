package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/validate"
)

// MessageID names the message at offset of partition pid (store.MessageID).
func MessageID(pid uuid.UUID, offset int64) string { return store.MessageID(pid, offset) }

// ValidateName checks a required queue, partition or group name by the
// rules of package validate.
func ValidateName(kind, name string) error { return validate.Name(kind, name) }

// prepared is a validated push item.
type prepared struct {
	index int
	item  api.PushItem
	// hash is the producer's transaction id's (none when minted).
	hash int64
	// minted says the item had no transaction id: its frame stores none and
	// its answer names it by its offset (store.MintedID).
	minted bool
	// claimed is set when the item's id is one lethe minted for the
	// partition it names (claimMinted): it is answered, not written.
	claimed *claim
	// msg is what its frame will hold; its payload aliases the request
	// until the segment is encoded (segmentOf).
	msg frame.Message
}

// validatePush checks items by the rules of package validate; nothing is
// looked up or written before they pass.
func (e *Engine) validatePush(items []api.PushItem, payloadsValid bool) error {
	lim := validate.PushLimits{MaxItems: e.cfg.MaxItems, MaxPayloadBytes: e.cfg.MaxPayloadBytes}
	return validate.PushItems(items, lim, payloadsValid)
}

// preparePush encodes the frames of validated items, sealing the payloads
// of encrypted queues, and answers the ids lethe minted that come back
// (claimMinted); queues are the options of the queues pushed to
// (pushQueues). Nothing is written when any item cannot be stored.
func (e *Engine) preparePush(ctx context.Context, items []api.PushItem, queues map[string]*Queue, producerSub string) ([]prepared, error) {
	now := e.clock.Now()
	out := make([]prepared, len(items))
	for i, it := range items {
		if it.Partition == "" {
			it.Partition = api.DefaultPartition
		}
		if len(it.Payload) == 0 {
			it.Payload = json.RawMessage("null") // as Queen stores a missing payload
		}
		minted := it.TransactionID == ""
		var hash int64
		if !minted {
			hash = store.TxnHash(it.TransactionID)
		}
		m := frame.Message{CreatedAt: now, TxnID: it.TransactionID, TraceID: it.TraceID, ProducerSub: producerSub, Payload: it.Payload}
		if err := e.sealFor(queues[it.Queue], &m); err != nil {
			return nil, err
		}
		out[i] = prepared{index: i, item: it, hash: hash, minted: minted, msg: m}
	}
	return out, e.claimMinted(ctx, out)
}

// groupByPartition splits prepared items into one append request per
// partition, keeping item order within each.
func groupByPartition(items []prepared) ([]*appendReq, [][]int) {
	var reqs []*appendReq
	var idx [][]int
	at := map[partKey]int{}
	for _, p := range items {
		if p.claimed != nil {
			continue // answered without a write
		}
		k := partKey{p.item.Queue, p.item.Partition}
		j, ok := at[k]
		if !ok {
			j = len(reqs)
			at[k] = j
			reqs = append(reqs, &appendReq{queue: k.queue, partition: k.partition})
			idx = append(idx, nil)
		}
		r := reqs[j]
		r.add(p.hash, p.minted, p.msg)
		idx[j] = append(idx[j], p.index)
	}
	return reqs, idx
}

// Push appends items, creating queues and partitions on first use. The frames
// of one request for one partition land in one segment, together with those
// of concurrent requests to the same partition.
func (e *Engine) Push(ctx context.Context, items []api.PushItem, producerSub string) ([]api.PushResult, error) {
	return e.push(ctx, items, pushOptions{producerSub: producerSub, checkSize: true})
}

// PushDecoded is Push for items whose payloads a JSON decoder has already
// validated (the HTTP path), sparing a second scan of every payload.
func (e *Engine) PushDecoded(ctx context.Context, items []api.PushItem, producerSub string) ([]api.PushResult, error) {
	return e.push(ctx, items, pushOptions{producerSub: producerSub, payloadsValid: true, checkSize: true})
}

// PushBuffered is Push for items a replica already accepted while in
// maintenance mode (answered "buffered"): a queue's maxSize does not refuse
// them, since refusing now would lose what was promised.
func (e *Engine) PushBuffered(ctx context.Context, items []api.PushItem) ([]api.PushResult, error) {
	return e.push(ctx, items, pushOptions{})
}

// pushOptions say how a push is checked.
type pushOptions struct {
	producerSub   string
	payloadsValid bool
	// checkSize refuses a push that would take a queue past its maxSize.
	checkSize bool
}

func (e *Engine) push(ctx context.Context, items []api.PushItem, o pushOptions) ([]api.PushResult, error) {
	if len(items) == 0 {
		return []api.PushResult{}, nil // clients push an empty tail batch
	}
	if err := e.validatePush(items, o.payloadsValid); err != nil {
		return nil, err
	}
	queues, err := e.pushQueues(ctx, items)
	if err != nil {
		return nil, err
	}
	prep, err := e.preparePush(ctx, items, queues, o.producerSub)
	if err != nil {
		return nil, err
	}
	if o.checkSize {
		if err := e.checkCapacity(ctx, queues, prep); err != nil {
			return nil, err
		}
	}
	reqs, idx := groupByPartition(prep)
	results := make([]api.PushResult, len(items))
	pids, errs := e.appendAll(ctx, reqs)
	// Each partition's segment committed on its own: count and wake for
	// those that did, even when another failed.
	var fx effects
	for j, r := range reqs {
		if errs[j] == nil {
			fx.pushed(r.queue, len(r.msgs), pushHint(queues[r.queue], pids[j], r.partition))
		}
	}
	e.fire(&fx)
	for j, r := range reqs {
		if errs[j] != nil {
			return nil, errs[j]
		}
		fillPushResults(results, prep, idx[j], pids[j], r.results)
	}
	fillClaimed(results, prep)
	return results, nil
}

// pushHint names the partition a push wrote to, for the long poll it
// wakes; none for a queue this push created (q nil), which no group has
// a cursor on yet.
func pushHint(q *Queue, pid uuid.UUID, partition string) wakeHint {
	if q == nil {
		return wakeHint{}
	}
	return wakeHint{queueID: q.ID, pid: pid, partition: partition}
}

// appendAll writes each request to its partition, concurrently: each
// partition has its own serializer.
func (e *Engine) appendAll(ctx context.Context, reqs []*appendReq) ([]uuid.UUID, []error) {
	pids := make([]uuid.UUID, len(reqs))
	errs := make([]error, len(reqs))
	done := make(chan int, len(reqs))
	for j, r := range reqs {
		go func() {
			pids[j], errs[j] = e.appendWithRetry(ctx, r)
			done <- j
		}()
	}
	for range reqs {
		<-done
	}
	return pids, errs
}

// fillPushResults answers the items at positions at of prep, stored in
// partition pid with outcomes res.
func fillPushResults(results []api.PushResult, prep []prepared, at []int, pid uuid.UUID, res []store.Appended) {
	for k, i := range at {
		status := api.StatusQueued
		if res[k].Duplicate {
			status = api.StatusDuplicate
		}
		txnID := prep[i].item.TransactionID
		if prep[i].minted {
			txnID = store.MintedID(pid, res[k].Offset)
		}
		results[i] = pushResult(i, prep[i].item, txnID, status, pid, res[k].Offset)
	}
}

// pushResult is the answer to item i, stored (or found stored) at offset of
// partition pid under transaction id txnID.
func pushResult(i int, it api.PushItem, txnID, status string, pid uuid.UUID, offset int64) api.PushResult {
	return api.PushResult{
		Index:              i,
		TransactionID:      txnID,
		TransactionIDCamel: txnID,
		Status:             status,
		MessageID:          MessageID(pid, offset),
		PartitionID:        pid.String(),
		TraceID:            it.TraceID,
		QueueName:          it.Queue,
	}
}

// appendWithRetry appends r, recreating its partition once if it was deleted
// since the catalog cached it.
func (e *Engine) appendWithRetry(ctx context.Context, r *appendReq) (uuid.UUID, error) {
	for attempt := 0; ; attempt++ {
		pid, err := e.catalog.ensurePartition(ctx, r.queue, r.partition)
		if err != nil {
			return uuid.Nil, err
		}
		err = e.appender.append(ctx, pid, r)
		if errors.Is(err, store.ErrPartitionGone) && attempt == 0 {
			e.catalog.forgetQueue(r.queue)
			continue
		}
		return pid, err
	}
}
