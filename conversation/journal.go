//go:build unix

package conversation

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// JournalFile is the write-behind journal of a FileStore opened with
// FileOptions.WriteBehind, kept next to base_state.json. It holds events
// that are committed but whose event files may not be written yet; it is
// empty whenever the store is idle.
const JournalFile = ".event_journal"

// Journal records: "GJ", line length, data length (uint32 little endian),
// CRC-32C of line and data, the index-cache line, the event JSON.
const journalHeader = 2 + 4 + 4 + 4

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func appendJournalRecord(b, line, data []byte) []byte {
	b = append(b, 'G', 'J')
	b = binary.LittleEndian.AppendUint32(b, uint32(len(line)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	crc := crc32.Update(crc32.Checksum(line, crcTable), crcTable, data)
	b = binary.LittleEndian.AppendUint32(b, crc)
	b = append(b, line...)
	return append(b, data...)
}

// journalRecord is one parsed record.
type journalRecord struct {
	idx  int
	id   string
	data []byte
}

// parseJournal returns the complete, intact records of a journal, stopping
// at the first torn or damaged one.
func parseJournal(b []byte) []journalRecord {
	var out []journalRecord
	for len(b) >= journalHeader && b[0] == 'G' && b[1] == 'J' {
		ll := int(binary.LittleEndian.Uint32(b[2:]))
		dl := int(binary.LittleEndian.Uint32(b[6:]))
		crc := binary.LittleEndian.Uint32(b[10:])
		if ll < 0 || dl < 0 || len(b)-journalHeader < ll+dl {
			break
		}
		line, data := b[journalHeader:journalHeader+ll], b[journalHeader+ll:journalHeader+ll+dl]
		if crc32.Update(crc32.Checksum(line, crcTable), crcTable, data) != crc {
			break
		}
		ent, err := scanEntry(0, data)
		if err != nil {
			break
		}
		var idx int
		if _, err := fmt.Sscanf(string(line), "%d\t", &idx); err != nil {
			break
		}
		out = append(out, journalRecord{idx: idx, id: ent.ID, data: data})
		b = b[journalHeader+ll+dl:]
	}
	return out
}

// replayJournal writes the event files of journaled events that a killed
// process did not write, extending the contiguous run ids. Rewriting a file
// that exists is harmless: it gets the same bytes.
func (s *FileStore) replayJournal(ids []string) []string {
	path := filepath.Join(s.dir, JournalFile)
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ids
	}
	replayed := 0
	for _, r := range parseJournal(b) {
		switch {
		case r.idx < len(ids) && ids[r.idx] == r.id, r.idx == len(ids):
		default:
			slog.Warn("conversation: journal record does not fit the log; ignoring the rest", "index", r.idx, "id", r.id)
			return ids
		}
		if err := writeNew(filepath.Join(s.eventsDir, eventFileName(r.idx, r.id)), r.data, s.opts.Durable, true); err != nil {
			slog.Warn("conversation: cannot replay journaled event", "index", r.idx, "err", err)
			return ids
		}
		if r.idx == len(ids) {
			ids = append(ids, r.id)
		}
		replayed++
	}
	if !s.opts.WriteBehind {
		// The events are in their files now; a write-behind store truncates
		// the journal itself when it starts.
		if s.opts.Durable {
			syncDir(s.eventsDir)
		}
		os.Remove(path)
	}
	if replayed > 0 {
		slog.Info("conversation: wrote journaled events left by an interrupted writer", "dir", s.dir, "events", replayed)
	}
	return ids
}

// writeBehind is the state of a write-behind FileStore.
type writeBehind struct {
	fd      int    // JournalFile, O_APPEND
	rec     []byte // reused record buffer, under writeMu
	scratch []byte // reused journal line buffer, under writeMu
	line    []byte // reused index line buffer of the background writer
	wake    chan struct{}
	quit    chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	cond    *sync.Cond // signalled when pending empties or err is set
	pending map[int]pendingEvent
	next    int // index of the next event file to write
	err     error
}

type pendingEvent struct {
	ent  Entry
	data []byte
}

func (s *FileStore) startWriteBehind(next int) error {
	fd, err := syscall.Open(filepath.Join(s.dir, JournalFile), syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("conversation: opening journal: %w", err)
	}
	w := &writeBehind{
		fd: fd, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		pending: make(map[int]pendingEvent), next: next,
	}
	w.cond = sync.NewCond(&w.mu)
	s.wb = w
	go s.writeLoop()
	return nil
}

// journalAppend commits data to the journal with one write and queues its
// event file. Called with writeMu held.
func (s *FileStore) journalAppend(ent Entry, data []byte) error {
	w := s.wb
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	line, _ := appendIndexLine(w.scratch[:0], &ent)
	w.scratch = line
	w.rec = appendJournalRecord(w.rec[:0], line, data)
	for rest := w.rec; len(rest) > 0; {
		n, err := syscall.Write(w.fd, rest)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: filepath.Join(s.dir, JournalFile), Err: err}
		}
		rest = rest[n:]
	}
	if s.opts.Durable {
		if err := syscall.Fsync(w.fd); err != nil {
			return &os.PathError{Op: "fsync", Path: filepath.Join(s.dir, JournalFile), Err: err}
		}
	}
	w.mu.Lock()
	w.pending[ent.Index] = pendingEvent{ent, data}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// pendingData returns the JSON of event i if its file is not written yet.
func (s *FileStore) pendingData(i int) ([]byte, bool) {
	if s.wb == nil {
		return nil, false
	}
	s.wb.mu.Lock()
	defer s.wb.mu.Unlock()
	p, ok := s.wb.pending[i]
	return p.data, ok
}

// writeLoop writes queued event files in log order, then empties the
// journal once nothing is pending.
func (s *FileStore) writeLoop() {
	w := s.wb
	defer close(w.done)
	for {
		select {
		case <-w.wake:
		case <-w.quit:
			s.drain()
			return
		}
		s.drain()
	}
}

func (s *FileStore) drain() {
	w := s.wb
	for {
		w.mu.Lock()
		p, ok := w.pending[w.next]
		w.mu.Unlock()
		if !ok {
			break
		}
		err := writeNew(filepath.Join(s.eventsDir, eventFileName(p.ent.Index, p.ent.ID)), p.data, s.opts.Durable, true)
		if err == nil && s.opts.Durable {
			err = syncDir(s.eventsDir)
		}
		if err != nil {
			slog.Error("conversation: write-behind failed; the events stay in the journal", "err", err)
			w.mu.Lock()
			w.err = fmt.Errorf("conversation: write-behind: %w", err)
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		s.writeIndexLine(&w.line, &p.ent)
		w.mu.Lock()
		delete(w.pending, w.next)
		w.next++
		w.mu.Unlock()
	}
	s.flushIndex(&w.line)
	// Empty the journal if no append slipped in; appends hold writeMu.
	s.writeMu.Lock()
	w.mu.Lock()
	if len(w.pending) == 0 {
		if err := syscall.Ftruncate(w.fd, 0); err != nil {
			slog.Warn("conversation: cannot empty the journal", "err", err)
		}
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	s.writeMu.Unlock()
}

// Sync waits until every appended event is in its own file. It is a no-op
// without WriteBehind.
func (s *FileStore) Sync() error {
	if s.wb == nil {
		return nil
	}
	w := s.wb
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

func (s *FileStore) stopWriteBehind() {
	if s.wb == nil {
		return
	}
	close(s.wb.quit)
	<-s.wb.done
	syscall.Close(s.wb.fd)
}
