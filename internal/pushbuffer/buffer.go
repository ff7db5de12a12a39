package pushbuffer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Files in the buffer directory. New pushes append to pending; a replay
// first renames pending to replaying, so pushes buffered while it runs (if
// maintenance comes back on) start a fresh pending file.
const (
	pendingFile   = "pending.jsonl"
	replayingFile = "replaying.jsonl"
	// rejectedFile keeps lines the engine refused on replay, for a person
	// to look at; they are never retried.
	rejectedFile = "rejected.jsonl"
)

// fileBuffer is the append-only file of JSON lines, one push item a line.
// Nothing is created on disk until the first append, so a replica that
// never enters maintenance leaves no files.
type fileBuffer struct {
	dir string

	mu   sync.Mutex // serializes appends and rotation
	f    *os.File   // pending file, opened on first append
	size int64      // bytes in the pending file: a failed append truncates back to it

	pending   atomic.Int64 // lines in the pending file
	replaying atomic.Int64 // lines of the replaying file not yet replayed
}

// openBuffer counts what an earlier run left in dir, cutting a torn last
// line: a crash mid-append, which was never acknowledged.
func openBuffer(dir string) (*fileBuffer, error) {
	b := &fileBuffer{dir: dir}
	n, size, err := repair(b.path(pendingFile))
	if err != nil {
		return nil, err
	}
	b.pending.Store(n)
	b.size = size
	n, _, err = repair(b.path(replayingFile))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		// Replayed in full before a crash that came before its removal.
		if err := os.Remove(b.path(replayingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("maintenance buffer: %w", err)
		}
	}
	b.replaying.Store(n)
	return b, nil
}

func (b *fileBuffer) path(name string) string { return filepath.Join(b.dir, name) }

// count is the number of buffered messages not yet replayed.
func (b *fileBuffer) count() int64 { return b.pending.Load() + b.replaying.Load() }

// repair truncates path after its last newline and counts its lines. A
// missing file is empty.
func repair(path string) (lines, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("maintenance buffer: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	var pos, end int64
	for {
		n, err := f.Read(buf)
		for i, c := range buf[:n] {
			if c == '\n' {
				lines++
				end = pos + int64(i) + 1
			}
		}
		pos += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("maintenance buffer: read %s: %w", path, err)
		}
	}
	if end != pos {
		if err := f.Truncate(end); err != nil {
			return 0, 0, fmt.Errorf("maintenance buffer: cut torn line of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return 0, 0, fmt.Errorf("maintenance buffer: %w", err)
		}
	}
	return lines, end, nil
}

// appendLocked writes n lines and fsyncs them; the caller holds mu. On
// failure the file is cut back so no torn line stays behind.
func (b *fileBuffer) appendLocked(data []byte, n int) error {
	if b.f == nil {
		if err := os.MkdirAll(b.dir, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", b.dir, err)
		}
		f, err := os.OpenFile(b.path(pendingFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open %s: %w", b.path(pendingFile), err)
		}
		if err := syncDir(b.dir); err != nil {
			f.Close()
			return err
		}
		b.f = f
	}
	if _, err := b.f.Write(data); err != nil {
		_ = b.f.Truncate(b.size)
		return fmt.Errorf("write %s: %w", b.path(pendingFile), err)
	}
	if err := b.f.Sync(); err != nil {
		_ = b.f.Truncate(b.size)
		return fmt.Errorf("fsync %s: %w", b.path(pendingFile), err)
	}
	b.size += int64(len(data))
	b.pending.Add(int64(n))
	return nil
}

// rotate hands the pending lines to replay by renaming the file. It
// reports false when nothing is pending. The replaying file must be gone.
func (b *fileBuffer) rotate() (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.pending.Load()
	if n == 0 {
		return false, nil
	}
	if _, err := os.Lstat(b.path(replayingFile)); err == nil {
		return false, fmt.Errorf("maintenance buffer: %s still exists; it must be replayed first", b.path(replayingFile))
	}
	if b.f != nil {
		if err := b.f.Close(); err != nil {
			return false, fmt.Errorf("maintenance buffer: close: %w", err)
		}
		b.f = nil
	}
	if err := os.Rename(b.path(pendingFile), b.path(replayingFile)); err != nil {
		return false, fmt.Errorf("maintenance buffer: %w", err)
	}
	if err := syncDir(b.dir); err != nil {
		return false, err
	}
	b.replaying.Add(n)
	b.pending.Store(0)
	b.size = 0
	return true, nil
}

// hasReplaying tells whether a replaying file waits, counted or not.
func (b *fileBuffer) hasReplaying() bool {
	if b.replaying.Load() > 0 {
		return true
	}
	_, err := os.Lstat(b.path(replayingFile))
	return err == nil
}

// finishReplay removes the replayed file.
func (b *fileBuffer) finishReplay() error {
	if err := os.Remove(b.path(replayingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("maintenance buffer: %w", err)
	}
	b.replaying.Store(0)
	return syncDir(b.dir)
}

// reject keeps a line the engine refused.
func (b *fileBuffer) reject(line []byte) error {
	f, err := os.OpenFile(b.path(rejectedFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("maintenance buffer: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("maintenance buffer: write %s: %w", rejectedFile, err)
	}
	return f.Sync()
}

func (b *fileBuffer) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		_ = b.f.Close()
		b.f = nil
	}
}

// syncDir makes a file's creation or rename durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("maintenance buffer: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("maintenance buffer: fsync %s: %w", dir, err)
	}
	return nil
}
