package pushbuffer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// replayBatchBytes bounds the payload bytes of one replayed push.
const replayBatchBytes = 4 << 20

// replayStats counts what a replay did.
type replayStats struct {
	queued, duplicate, rejected int
}

// entry is one line of the buffer: an item, or a line that does not decode.
type entry struct {
	raw  []byte
	item api.PushItem
	ok   bool
}

// replay pushes this replica's buffered messages through the engine, oldest
// first, and removes them once pushed. It stops early, keeping the rest,
// when push maintenance comes back on. Running it again after a crash is
// safe: every line carries a transaction id, so a message already stored
// answers duplicate and is not stored twice.
func (s *Service) replay(ctx context.Context) error {
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	var st replayStats
	defer func() {
		if st != (replayStats{}) {
			s.log.Info("maintenance buffer replayed", "queued", st.queued, "duplicate", st.duplicate,
				"rejected", st.rejected, "still_buffered", s.buf.count())
		}
	}()
	for {
		if s.push.Load() {
			return nil
		}
		if s.buf.hasReplaying() {
			done, err := s.replayFile(ctx, &st)
			if err != nil || !done {
				return err
			}
			if err := s.buf.finishReplay(); err != nil {
				return err
			}
			s.progress = 0
		}
		rotated, err := s.buf.rotate()
		if err != nil || !rotated {
			return err
		}
	}
}

// replayFile pushes the replaying file in batches, skipping lines this
// process pushed on an earlier, failed attempt. It reports false when it
// stopped because push maintenance came back on.
func (s *Service) replayFile(ctx context.Context, st *replayStats) (bool, error) {
	f, err := os.Open(s.buf.path(replayingFile))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("maintenance buffer: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var batch []entry
	bytes, line := 0, 0
	flush := func() error {
		if err := s.pushEntries(ctx, batch, st); err != nil {
			return err
		}
		s.progress += len(batch)
		s.buf.replaying.Add(-int64(len(batch)))
		batch, bytes = batch[:0], 0
		return nil
	}
	for {
		raw, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(raw) > 0 {
				s.log.Warn("maintenance buffer: ignoring a torn last line", "bytes", len(raw))
			}
			return true, flush()
		}
		if err != nil {
			return false, fmt.Errorf("maintenance buffer: read: %w", err)
		}
		line++
		if line <= s.progress {
			continue
		}
		e := entry{raw: raw}
		e.ok = json.Unmarshal(raw, &e.item) == nil
		batch = append(batch, e)
		bytes += len(raw)
		if len(batch) >= s.cfg.ReplayBatch || bytes >= replayBatchBytes {
			if err := flush(); err != nil {
				return false, err
			}
			if s.push.Load() {
				return false, nil
			}
		}
	}
}

// pushEntries pushes a batch. When the engine refuses it as a whole for a
// bad item, the items go one by one so the good ones still land and the bad
// ones are set aside in rejected.jsonl. Other errors stop the replay.
func (s *Service) pushEntries(ctx context.Context, batch []entry, st *replayStats) error {
	var items []api.PushItem
	for _, e := range batch {
		if e.ok {
			items = append(items, e.item)
		} else if err := s.rejectLine(e.raw, "line is not a JSON push item", st); err != nil {
			return err
		}
	}
	if len(items) == 0 {
		return nil
	}
	res, err := s.eng.PushBuffered(ctx, items)
	if err == nil {
		st.count(res)
		return nil
	}
	if !refused(err) {
		return fmt.Errorf("maintenance replay: %w", err)
	}
	for _, e := range batch {
		if !e.ok {
			continue
		}
		res, err := s.eng.PushBuffered(ctx, []api.PushItem{e.item})
		switch {
		case err == nil:
			st.count(res)
		case refused(err):
			if err := s.rejectLine(e.raw, err.Error(), st); err != nil {
				return err
			}
		default:
			return fmt.Errorf("maintenance replay: %w", err)
		}
	}
	return nil
}

// refused tells the engine's "this item is bad" errors from failures.
func refused(err error) bool {
	return errors.Is(err, engine.ErrInvalid) || errors.Is(err, engine.ErrTooLarge)
}

func (s *Service) rejectLine(raw []byte, reason string, st *replayStats) error {
	s.log.Error("maintenance replay: message refused; kept in rejected.jsonl", "reason", reason,
		"file", s.buf.path(rejectedFile))
	st.rejected++
	return s.buf.reject(raw)
}

func (st *replayStats) count(res []api.PushResult) {
	for _, r := range res {
		if r.Status == api.StatusDuplicate {
			st.duplicate++
		} else {
			st.queued++
		}
	}
}
