//go:build unix

package filestore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"

	"golang.org/x/sys/unix"
)

// JournalFile is the write-behind journal of a Store (unless opened
// with Options.WriteThrough), kept next to base_state.json. It holds events
// that are committed but whose event files may not be written yet. On Linux
// its first journalMapSize bytes are mapped into memory and events are
// encoded straight into them; a killed process loses nothing, since the
// pages belong to the kernel. When the background writer catches up, the
// next record goes to offset 0 again: rewriting pages the file already has
// costs a fraction of extending it, so the bytes after the live records are
// stale ones with older indexes, which the reader tells apart. A closed
// store leaves the journal empty.
const JournalFile = ".event_journal"

// Journal records: "GW", the event's index (uint64), the length of its
// JSON (uint32), CRC-32C of index and JSON (uint32), all little endian,
// then the JSON.
const journalHeader = 2 + 8 + 4 + 4

// crcTable is made on first use: building the Castagnoli tables takes
// ~0.2 ms, which every start of a program importing the package paid
// (GODEBUG=inittrace=1), reading or writing a conversation or not.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// appendJournalRecord appends the record of event idx, encoding it in
// place, and returns the extended buffer and the event's JSON within it.
func appendJournalRecord(b []byte, idx int, e event.Event) ([]byte, []byte, error) {
	start := len(b)
	b = append(b, 'G', 'W')
	b = binary.LittleEndian.AppendUint64(b, uint64(idx))
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0) // length and CRC, filled below
	b, err := event.Append(b, e)
	if err != nil {
		return b[:start], nil, err
	}
	h, data := b[start:start+journalHeader], b[start+journalHeader:]
	binary.LittleEndian.PutUint32(h[10:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[14:], crc32.Update(crc32.Checksum(h[2:10], crcTable()), crcTable(), data))
	return b, data, nil
}

// journalRecord is one parsed record.
type journalRecord struct {
	idx  int
	id   string
	data []byte
}

// parseJournal returns the complete, intact records of a journal, stopping
// at the first torn or damaged one, or at the first whose index does not
// follow the previous one's: the stale tail left by a rewind.
func parseJournal(b []byte) []journalRecord {
	var out []journalRecord
	for len(b) >= journalHeader && b[0] == 'G' && b[1] == 'W' {
		idx := binary.LittleEndian.Uint64(b[2:])
		n := uint64(binary.LittleEndian.Uint32(b[10:]))
		if n > uint64(len(b)-journalHeader) || idx > math.MaxInt32 {
			break
		}
		data := b[journalHeader : journalHeader+n]
		if crc32.Update(crc32.Checksum(b[2:10], crcTable()), crcTable(), data) != binary.LittleEndian.Uint32(b[14:]) {
			break
		}
		if len(out) > 0 && int(idx) != out[len(out)-1].idx+1 {
			break
		}
		ent, err := conversation.ScanEntry(int(idx), data)
		if err != nil {
			break
		}
		out = append(out, journalRecord{idx: int(idx), id: ent.ID, data: data})
		b = b[journalHeader+n:]
	}
	return out
}

// replayJournal writes the event files of journaled events that a killed
// process did not write, extending the contiguous run ids, then removes the
// journal. A file that exists is rewritten only if its bytes differ (the
// writer may have been killed while writing it). Failing to write a file
// is an error: the journal is then kept. from is the lowest index whose file
// it wrote (len(ids) if none): the index cache may not describe those.
func (s *Store) replayJournal(ids []string) (_ []string, from int, _ error) {
	from = len(ids)
	path := filepath.Join(s.dir, JournalFile)
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ids, from, nil
	}
	replayed := 0
	for _, r := range parseJournal(b) {
		if r.idx > len(ids) || r.idx < len(ids) && ids[r.idx] != r.id {
			slog.Warn("filestore: journal record does not fit the log; ignoring the rest", "index", r.idx, "id", r.id)
			break
		}
		name := filepath.Join(s.eventsDir, eventFileName(r.idx, r.id))
		if r.idx < len(ids) {
			if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, r.data) {
				continue
			}
		}
		if err := writeNew(name, r.data, s.opts.Durable, true); err != nil {
			return nil, 0, fmt.Errorf("filestore: writing journaled event %d: %w", r.idx, err)
		}
		from = min(from, r.idx)
		if r.idx == len(ids) {
			ids = append(ids, r.id)
		}
		replayed++
	}
	if s.opts.Durable && replayed > 0 {
		if err := syncDir(s.eventsDir); err != nil {
			return nil, 0, fmt.Errorf("filestore: %w", err)
		}
	}
	if err := os.Remove(path); err != nil {
		slog.Warn("filestore: cannot remove the replayed journal", "err", err)
	}
	if replayed > 0 {
		slog.Info("filestore: wrote journaled events left by an interrupted writer", "dir", s.dir, "events", replayed)
	}
	return ids, from, nil
}

// writeBehind is the state of a write-behind Store.
type writeBehind struct {
	fd int // JournalFile
	// buf mirrors the journal since its last rewind: buf[k] is the byte at
	// offset k. Events are encoded straight into it, and pending events'
	// JSON are slices of it, valid until the next rewind, which waits for
	// every pending file to be written. Under writeMu.
	buf []byte
	// mapped, when set, is the start of the journal mapped into memory
	// (mapJournal); buf is a slice of it unless a record did not fit, so
	// an append copies into the page cache without a system call.
	mapped []byte
	useMap bool   // false once the mapping faulted
	line   []byte // reused index line buffer of the background writer
	wake   chan struct{}
	// An append does not wake the writer itself: waking a parked goroutine
	// costs the appender a thread wake-up (a few µs, more in a VM), while
	// resetting a timer costs a fraction of that. The timer fires after
	// writeBehindDelay and kicks wake; Sync and Close kick it at once.
	timer *time.Timer
	armed atomic.Bool // timer set and not yet seen by writeLoop
	quit  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	cond    *sync.Cond // signalled when pending empties or falls to maxBacklog/2, and after each drain
	pending map[int]pendingEvent
	next    int // index of the next event file to write
	// err is the failure of the last drain, nil once a drain writes every
	// pending file: a full disk fails appends only while it is full.
	err error
	// started and drains count the drains that began and ended, so that
	// an append refused by err can wait for the retry it asked for (see
	// retry).
	started, drains int
}

// writeBehindDelay is how long after an append its file is written at the
// earliest (timer resolution makes it up to a millisecond or so).
const writeBehindDelay = 100 * time.Microsecond

// retry waits, with w.mu held, until a drain that starts after the call
// has ended, or until any drain has written every pending file. A drain
// already under way may have failed its write before the disk got room:
// waiting for that one alone let an append fail after the room came back
// (TestDiskFullRecovers, once under load).
func (w *writeBehind) retry() {
	target := w.started + 1
	w.kick()
	for w.err != nil && w.drains < target {
		w.cond.Wait()
	}
}

// kick wakes the writer if it is not already due to wake.
func (w *writeBehind) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// maxJournalBuf is the largest buffer a rewind keeps for reuse.
const maxJournalBuf = 4 << 20

// maxBacklog is how many events may wait for their files before an append
// waits for the writer.
const maxBacklog = 1024

// journalMapSize is how much of the journal is mapped: room for the usual
// backlog of a few events; a record that does not fit is written with
// pwrite.
const journalMapSize = 64 << 10

type pendingEvent struct {
	ent  conversation.Entry
	data []byte
}

func newWriteBehind(next int) *writeBehind {
	w := &writeBehind{fd: -1, pending: make(map[int]pendingEvent), next: next}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// startJournal creates the journal and starts the writer at the first append: a
// store that is only read costs no journal, goroutine or mapping.
func (s *Store) startJournal() error {
	w := s.wb
	fd, err := unix.Open(filepath.Join(s.dir, JournalFile), unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(s.dir, JournalFile), Err: err}
	}
	w.fd = fd
	if !s.opts.Durable { // durable appends fdatasync a pwrite instead
		if m, err := mapJournal(fd, journalMapSize); err == nil {
			w.mapped, w.buf, w.useMap = m, m[:0], true
		} else {
			slog.Debug("filestore: journal not mapped; appends use pwrite", "err", err)
		}
	}
	w.wake, w.quit, w.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	w.timer = time.AfterFunc(time.Hour, w.kick)
	w.timer.Stop()
	go s.writeLoop()
	return nil
}

// journalAppend encodes e, the event of ent, into the journal with one
// pwrite and queues its event file. Called with writeMu held.
func (s *Store) journalAppend(ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	i := ent.Index
	w := s.wb
	w.mu.Lock()
	if w.err != nil {
		// The last drain failed (a full disk, say): retry it once now, so
		// that a store whose disk has room again takes appends again
		// without being reopened.
		w.retry()
	}
	for len(w.pending) >= maxBacklog && w.err == nil {
		// An appender faster than file creation waits rather than let the
		// backlog (and its memory) grow without bound.
		w.kick()
		w.cond.Wait()
	}
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return conversation.Entry{}, err
	}
	if w.fd < 0 {
		if err := s.startJournal(); err != nil {
			return conversation.Entry{}, err
		}
	}
	off := len(w.buf)
	var b, data []byte
	if w.useMap && w.inMap(w.buf) {
		b, data, err = w.appendMapped(i, e)
	} else {
		b, data, err = appendJournalRecord(w.buf, i, e)
	}
	if err != nil {
		return conversation.Entry{}, fmt.Errorf("filestore: encoding event %s: %w", e.EventBase().ID, err)
	}
	for rest, at := b[off:], int64(off); len(rest) > 0 && !w.inMap(b); {
		n, err := pwrite(w.fd, filepath.Join(s.dir, JournalFile), rest, at)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// Nothing is committed: the next record overwrites this one.
			return conversation.Entry{}, &os.PathError{Op: "write", Path: filepath.Join(s.dir, JournalFile), Err: err}
		}
		rest, at = rest[n:], at+int64(n)
	}
	if s.opts.Durable {
		if err := unix.Fsync(w.fd); err != nil {
			return conversation.Entry{}, &os.PathError{Op: "fsync", Path: filepath.Join(s.dir, JournalFile), Err: err}
		}
	}
	w.buf = b
	ent.Size = len(data)
	w.mu.Lock()
	w.pending[i] = pendingEvent{ent, data}
	w.mu.Unlock()
	if !w.armed.Swap(true) {
		w.timer.Reset(writeBehindDelay)
	}
	return ent, nil
}

// inMap reports whether b is a slice of the mapped journal.
func (w *writeBehind) inMap(b []byte) bool {
	return w.mapped != nil && cap(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(w.mapped)
}

// appendMapped is appendJournalRecord into the mapped journal. A page the
// kernel cannot provide (the file was truncated behind our back, or an
// I/O error) arrives as a fault: it fails this append, and later ones use
// pwrite.
func (w *writeBehind) appendMapped(i int, e event.Event) (b, data []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			// debug.SetPanicOnFault: a memory fault's error has an Addr method.
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			w.buf, w.useMap = nil, false // the mapping stays for pending events' data
			b, data, err = nil, nil, fmt.Errorf("writing the mapped journal: %v", r)
		}
	}()
	return appendJournalRecord(w.buf, i, e)
}

// pendingData returns a copy of the JSON of event i if its file is not
// written yet.
func (s *Store) pendingData(i int) ([]byte, bool) {
	if s.wb == nil {
		return nil, false
	}
	s.wb.mu.Lock()
	defer s.wb.mu.Unlock()
	p, ok := s.wb.pending[i]
	return bytes.Clone(p.data), ok
}

// writeLoop writes queued event files in log order, then rewinds the
// journal once nothing is pending.
func (s *Store) writeLoop() {
	w := s.wb
	defer close(w.done)
	for {
		select {
		case <-w.wake:
			w.armed.Store(false)
		case <-w.quit:
			s.drain()
			return
		}
		s.drain()
	}
}

func (s *Store) drain() {
	w := s.wb
	w.mu.Lock()
	w.started++
	w.mu.Unlock()
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
			w.mu.Lock()
			if w.err == nil {
				slog.Error("filestore: write-behind failed; the events stay in the journal and appends fail until it succeeds", "err", err)
			}
			w.err = fmt.Errorf("filestore: write-behind: %w", err)
			w.drains++
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		s.writeIndexLine(&w.line, &p.ent, p.data)
		w.mu.Lock()
		delete(w.pending, w.next)
		w.next++
		if len(w.pending) == maxBacklog/2 {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
	s.flushIndex(&w.line)
	// A drain that follows a failed one ends here, before the rewind:
	// the append waiting for it holds writeMu.
	w.mu.Lock()
	recovered := w.err != nil
	if recovered {
		slog.Info("filestore: write-behind recovered; every journaled event has its file", "dir", s.dir)
		w.err = nil
		w.drains++
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	// Rewind the journal if no append slipped in; appends hold writeMu.
	s.writeMu.Lock()
	w.mu.Lock()
	if !recovered {
		w.drains++
		w.cond.Broadcast()
	}
	if len(w.pending) == 0 {
		switch {
		case w.useMap:
			w.buf = w.mapped[:0]
		case cap(w.buf) > maxJournalBuf:
			w.buf = nil
		default:
			w.buf = w.buf[:0]
		}
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	s.writeMu.Unlock()
}

// Sync waits until every appended event is in its own file. It is a no-op
// with WriteThrough.
func (s *Store) Sync() error {
	if s.wb == nil {
		return nil
	}
	w := s.wb
	s.writeMu.Lock()
	started := w.fd >= 0
	s.writeMu.Unlock()
	if !started {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		w.retry()
	}
	w.kick()
	for w.err == nil && len(w.pending) > 0 {
		w.cond.Wait()
	}
	return w.err
}

// stopWriteBehind drains and stops the writer. Called by Close after it
// marked the store closed, so no append can start the journal after the
// check below.
func (s *Store) stopWriteBehind() {
	if s.wb == nil {
		return
	}
	s.writeMu.Lock()
	started := s.wb.fd >= 0
	s.writeMu.Unlock()
	if !started {
		return
	}
	s.wb.timer.Stop()
	close(s.wb.quit)
	<-s.wb.done
	if s.wb.mapped != nil {
		unix.Munmap(s.wb.mapped)
		s.wb.mapped = nil
	}
	if s.wb.err == nil {
		// Every record has its file: a clean close leaves no journal to replay.
		if err := unix.Ftruncate(s.wb.fd, 0); err != nil {
			slog.Warn("filestore: cannot empty the journal", "err", err)
		}
	}
	unix.Close(s.wb.fd)
}
