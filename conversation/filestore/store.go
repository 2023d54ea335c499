//go:build unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// maxEventFileBytes bounds the event files Raw reads.
const maxEventFileBytes = 256 << 20

// Store is a Store in the reference's on-disk layout: base_state.json
// and one events/event-<index>-<id>.json file per event. It holds an
// exclusive flock on events/.eventlog.lock while open, so two processes
// (gohands or Python) cannot write one conversation at once.
type Store struct {
	dir, eventsDir string
	opts           Options
	// n is the number of events stored.
	n atomic.Int64
	// loaded holds the entries the open found, until Load hands them
	// over to the conversation's Log.
	loaded   []conversation.Entry
	loadedMu sync.Mutex

	writeMu sync.Mutex // serialises appends
	baseMu  sync.Mutex // serialises base writes
	lock    *os.File
	indexFD int // IndexFile, opened for appending; -1 if unavailable
	// eventsFD is the events directory, which event files are opened
	// relative to (no path walk per file); -1 until load. Readers hold
	// fdMu's read lock so that Close does not close it under them.
	eventsFD int
	fdMu     sync.RWMutex
	line     []byte // reused index line buffer, under writeMu
	buf      []byte // reused encoding buffer, under writeMu
	wb       *writeBehind
	closed   atomic.Bool
	// markers are the length markers Open found, which it removes.
	markers []string
	// sums are the checksums of the events found at open, by index: Raw
	// checks what it reads against them. Not changed after open.
	sums []fileSum
	// kept holds, by index, what a cache-less open's decoding of the
	// files it read gave (an event or an error), until Event first asks
	// for each: replaying such
	// a conversation (one the reference wrote) then reads and decodes
	// every file once. What is not asked for within keepScanned is
	// dropped, so an idle store does not hold its log in memory. Under
	// keptMu.
	keptMu    sync.Mutex
	kept      []keptFile
	keptN     int
	keptTimer *time.Timer
	// keptGC releases the raised collector goal (raiseGCGoal) that the
	// kept events hold; nil if they hold none.
	keptGC func()
}

// keepScanned is how long a cache-less open keeps the events it decoded
// for Event, and maxKeptBytes how many bytes of files at most it decodes
// for that: a resume builds its view from them well within that time.
// keepScanned is a variable so that tests on a loaded machine can widen it.
var keepScanned = 3 * time.Second

const maxKeptBytes = 64 << 20

// fileSum is the CRC-32C (Castagnoli) of an event file; ok is false when
// it is not known.
type fileSum struct {
	crc uint32
	ok  bool
}

func checksum(data []byte) uint32 { return crc32.Checksum(data, crcTable()) }

// Open opens (creating if needed) the conversation directory dir.
// It takes the conversation's lock, lists the event files, and builds the
// in-memory index from IndexFile, reading only the event files the cache
// does not cover and the last one. Reader rules are the reference's: file
// names must match event-<5+ digits>-<id>.json, the log is the contiguous
// run of indexes from 0, and a duplicate id keeps its first occurrence. A
// torn last event file, left by a writer killed mid-write, is renamed with
// TornSuffix and a warning instead of failing the open. Damage a crash does
// not leave (an unreadable middle file, files past a gap, two files for one
// index) fails with an error matching ErrDamaged; Raw reports an event file
// that no longer matches the size and checksum it was written with the same
// way.
func Open(dir string, opts *Options) (*Store, error) {
	s := &Store{dir: dir, eventsDir: filepath.Join(dir, EventsDir), indexFD: -1, eventsFD: -1}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.LockTimeout == 0 {
		s.opts.LockTimeout = time.Second
	}
	if err := os.MkdirAll(s.eventsDir, 0o755); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	if err := s.takeLock(); err != nil {
		return nil, err
	}
	if err := s.load(); err != nil {
		if s.eventsFD >= 0 {
			unix.Close(s.eventsFD)
		}
		s.lock.Close()
		return nil, err
	}
	// While the lock is held no other writer appends, and a writer killed
	// before Close must leave no marker claiming the length it found. The
	// listing load made under the lock names them all: only a writer
	// holding the lock writes one.
	s.removeLengthMarkers(s.markers)
	s.markers = nil
	return s, nil
}

func (s *Store) takeLock() error {
	path := filepath.Join(s.eventsDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("filestore: %w", err)
	}
	deadline := time.Now().Add(s.opts.LockTimeout)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			s.lock = f
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return fmt.Errorf("filestore: %s: %w", s.dir, conversation.ErrLocked)
			}
			return fmt.Errorf("filestore: locking %s: %w", path, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventFileName(i int, id string) string {
	return string(appendEventFileName(make([]byte, 0, 16+len(id)), i, id))
}

// appendEventFileName appends the name of event i's file to b.
func appendEventFileName(b []byte, i int, id string) []byte {
	b = append(b, "event-"...)
	for d := digits(i); d < 5; d++ {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '-')
	b = append(b, id...)
	return append(b, ".json"...)
}

func digits(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

func (s *Store) load() error {
	dfd, err := unix.Open(s.eventsDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("filestore: %w", &os.PathError{Op: "open", Path: s.eventsDir, Err: err})
	}
	s.eventsFD = dfd
	names, err := readDirNames(s.eventsDir)
	if err != nil {
		return fmt.Errorf("filestore: listing %s: %w", s.eventsDir, err)
	}
	l := listEvents(names, s.eventsDir)
	s.markers = l.markers
	ids := l.ids[:l.contiguous()]
	ids, replayed, err := s.replayJournal(ids)
	if err != nil {
		return err
	}
	if err := l.check(s.dir, ids); err != nil {
		return err
	}
	n := len(ids)

	entries := make([]conversation.Entry, n, n+min(n, 64)) // room for appends before the first copy (none for a new conversation: an idle one costs what it holds)
	have := make([]bool, n)
	s.sums = make([]fileSum, n)
	cached := s.readIndexFile(ids[:replayed], entries, have)
	// The cache vouches for files it does not read; the last one, where a
	// killed writer leaves a torn file, is always checked.
	if n > 0 && have[n-1] {
		data, err := os.ReadFile(filepath.Join(s.eventsDir, eventFileName(n-1, ids[n-1])))
		if err != nil || len(data) != entries[n-1].Size || checksum(data) != s.sums[n-1].crc {
			have[n-1] = false
			cached--
		}
	}
	// What the scan keeps stays reachable until it is taken or dropped:
	// the collector's goal is raised by about its size meanwhile (see
	// gcgoal.go), released by keep's owner or here on a failure.
	release := func() {}
	if uncached := n - cached; uncached >= gcRaiseMinFiles {
		release = raiseGCGoal(int64(uncached) * gcRaisePerFile)
	}
	defer func() { release() }()
	errs, kept := s.scanFiles(ids, entries, have)
	for i := 0; i < n && errs != nil; i++ {
		if err := errs[i]; err != nil {
			if i == n-1 {
				s.setAside(eventFileName(i, ids[i]), err)
				n--
				entries = entries[:n]
				s.sums = s.sums[:n]
				break
			}
			return &DamageError{Dir: s.dir, Index: i, File: eventFileName(i, ids[i]), Err: err}
		}
	}
	s.loaded = entries[:n]
	s.n.Store(int64(n))
	if s.keep(kept[:min(len(kept), n)], release) {
		release = func() {}
	}
	if cached != n {
		// The cache is rewritten in the background (a third of a
		// cache-less open's serial part). Only appends and Close use it:
		// they take writeMu, held until it is written and open. It
		// writes from a copy of the entries: Load hands them over to the
		// conversation's Log.
		own := slices.Clone(entries[:n])
		s.writeMu.Lock()
		go func() {
			defer s.writeMu.Unlock()
			if err := s.rewriteIndexFile(own); err != nil {
				slog.Warn("filestore: cannot write event index cache", "err", err)
			}
			s.openIndexFile()
		}()
	} else {
		s.openIndexFile()
	}
	if !s.opts.WriteThrough {
		s.wb = newWriteBehind(n)
	}
	return nil
}

// openIndexFile opens IndexFile for appending its lines.
func (s *Store) openIndexFile() {
	fd, err := unix.Open(filepath.Join(s.dir, IndexFile), unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		slog.Warn("filestore: cannot open event index cache", "err", err)
		return
	}
	s.indexFD = fd
}

func (s *Store) setAside(name string, cause error) {
	from := filepath.Join(s.eventsDir, name)
	to := from + TornSuffix
	if err := os.Rename(from, to); err != nil {
		slog.Warn("filestore: cannot set aside torn event file", "file", from, "err", err)
		return
	}
	slog.Warn("filestore: torn last event file set aside (its writer was probably killed mid-write)",
		"file", to, "cause", cause)
}

// Index cache lines: index, id, kind, source, timestamp, parent id, tool call
// id, action id, has-action (0/1), size, CRC-32C of the file, CRC-32C of
// the line up to that field (both 8 hex digits), separated by tabs. A line
// whose own checksum fails is ignored and its event read from its file, so
// a damaged cache can only cost time, never make an intact event look
// damaged. Events with a tab, newline or backslash in a field get no line
// and are read from their file on open. Lines of older formats (without the
// checksums) are ignored, so those events are read once.
const indexFields = 12

func appendIndexLine(b []byte, e *conversation.Entry, crc uint32) ([]byte, bool) {
	for _, f := range [...]string{e.ID, e.Kind, string(e.Source), e.Timestamp, e.ParentID, e.ToolCallID, e.ActionID} {
		if strings.ContainsAny(f, "\t\n\\") {
			return b, false
		}
	}
	start := len(b)
	b = strconv.AppendInt(b, int64(e.Index), 10)
	for _, f := range [...]string{e.ID, e.Kind, string(e.Source), e.Timestamp, e.ParentID, e.ToolCallID, e.ActionID} {
		b = append(b, '\t')
		b = append(b, f...)
	}
	if e.HasAction {
		b = append(b, "\t1\t"...)
	} else {
		b = append(b, "\t0\t"...)
	}
	b = strconv.AppendInt(b, int64(e.Size), 10)
	b = append(b, '\t')
	b = appendHex32(b, crc)
	sum := checksum(b[start:])
	b = append(b, '\t')
	b = appendHex32(b, sum)
	return append(b, '\n'), true
}

func appendHex32(b []byte, v uint32) []byte {
	const hex = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hex[v>>shift&0xf])
	}
	return b
}

// readIndexFile fills entries and s.sums from the cache lines that agree
// with the file names, and returns how many it filled. All strings share
// one allocation.
func (s *Store) readIndexFile(ids []string, entries []conversation.Entry, have []bool) int {
	data, err := os.ReadFile(filepath.Join(s.dir, IndexFile))
	if err != nil {
		return 0
	}
	// The entries' strings point into data, which is never modified: no
	// copy needed.
	text := unsafe.String(unsafe.SliceData(data), len(data))
	filled := 0
	var f [indexFields - 1]string
	for len(text) > 0 {
		nl := strings.IndexByte(text, '\n')
		if nl < 0 {
			break // a torn last line
		}
		start := len(data) - len(text)
		line := text[:nl]
		text = text[nl+1:]
		if len(line) < 9 || line[len(line)-9] != '\t' {
			continue
		}
		sum, err := strconv.ParseUint(line[len(line)-8:], 16, 32)
		line = line[:len(line)-9]
		if err != nil || uint32(sum) != checksum(data[start:start+len(line)]) {
			continue // a damaged line: its event is read from its file
		}
		k := 0
		for k < indexFields-2 {
			before, after, ok := strings.Cut(line, "\t")
			if !ok {
				break
			}
			f[k], line = before, after
			k++
		}
		if k != indexFields-2 || strings.IndexByte(line, '\t') >= 0 || len(line) != 8 {
			continue
		}
		f[k] = line
		i, err1 := strconv.Atoi(f[0])
		size, err2 := strconv.Atoi(f[9])
		crc, err3 := strconv.ParseUint(f[10], 16, 32)
		if err1 != nil || err2 != nil || err3 != nil || i < 0 || i >= len(ids) || have[i] || ids[i] != f[1] {
			continue
		}
		entries[i] = conversation.Entry{
			Index: i, ID: f[1], Kind: f[2], Source: event.Source(f[3]),
			Timestamp: f[4], ParentID: f[5], ToolCallID: f[6], ActionID: f[7], HasAction: f[8] == "1", Size: size,
		}
		s.sums[i] = fileSum{uint32(crc), true}
		have[i] = true
		filled++
	}
	return filled
}

func (s *Store) rewriteIndexFile(entries []conversation.Entry) error {
	b := make([]byte, 0, 200*len(entries)) // lines are ~180 bytes
	for i := range entries {
		b, _ = appendIndexLine(b, &entries[i], s.sums[i].crc)
	}
	return writeAtomic(filepath.Join(s.dir, IndexFile), b, s.opts.Durable)
}

// Load implements conversation.Store: it yields what Open found, in one
// batch. It can be called once.
func (s *Store) Load(context.Context) iter.Seq2[[]conversation.Entry, error] {
	return func(yield func([]conversation.Entry, error) bool) {
		s.loadedMu.Lock()
		ents := s.loaded
		s.loaded = nil
		s.loadedMu.Unlock()
		if ents == nil && s.n.Load() > 0 {
			yield(nil, errors.New("filestore: the store was loaded already"))
			return
		}
		if len(ents) > 0 {
			yield(ents, nil)
		}
	}
}

// ReadBase implements conversation.Store.
func (s *Store) ReadBase(context.Context) ([]byte, error) {
	if s.closed.Load() {
		return nil, conversation.ErrClosed
	}
	b, err := os.ReadFile(filepath.Join(s.dir, BaseStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	return b, nil
}

// WriteBase implements Store: the state is written to a temporary file that
// is then renamed over base_state.json, so a reader never sees half of it.
func (s *Store) WriteBase(_ context.Context, data []byte) error {
	if s.closed.Load() {
		return conversation.ErrClosed
	}
	s.baseMu.Lock()
	defer s.baseMu.Unlock()
	// The state being replaced was read and decoded when the store was
	// opened or written since: it is kept as PrevBaseStateFile, from
	// which Repair restores a base state damaged behind our back.
	base, prev := filepath.Join(s.dir, BaseStateFile), filepath.Join(s.dir, PrevBaseStateFile)
	os.Remove(prev)
	os.Link(base, prev)
	if err := writeAtomic(base, data, s.opts.Durable); err != nil {
		return fmt.Errorf("filestore: writing base state: %w", err)
	}
	return nil
}

func writeAtomic(path string, data []byte, durable bool) error {
	tmp := path + ".tmp"
	if err := writeNew(tmp, data, durable, true); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

// writeNew writes data to a new file at path with one write call in the
// common case. With replace unset the file must not exist.
func writeNew(path string, data []byte, durable, replace bool) error {
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC
	if replace {
		flags |= unix.O_TRUNC
	} else {
		flags |= unix.O_EXCL
	}
	fd, err := unix.Open(path, flags, 0o644)
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	for rest := data; len(rest) > 0; {
		n, err := write(fd, path, rest)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			unix.Unlink(path)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		rest = rest[n:]
	}
	if durable {
		if err := unix.Fsync(fd); err != nil {
			unix.Close(fd)
			unix.Unlink(path)
			return &os.PathError{Op: "fsync", Path: path, Err: err}
		}
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlink(path)
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// writeFault, set by tests, fails the writes (of new files and of the
// unmapped journal) whose path it returns an error for, as a full disk
// would.
var writeFault atomic.Pointer[func(path string) error]

// write is unix.Write, unless writeFault fails it (after writing half of
// b, as a disk that fills up does).
func write(fd int, path string, b []byte) (int, error) {
	if f := writeFault.Load(); f != nil {
		if err := (*f)(path); err != nil {
			unix.Write(fd, b[:len(b)/2])
			return 0, err
		}
	}
	return unix.Write(fd, b)
}

// pwrite is unix.Pwrite, unless writeFault fails it (after writing half
// of b).
func pwrite(fd int, path string, b []byte, off int64) (int, error) {
	if f := writeFault.Load(); f != nil {
		if err := (*f)(path); err != nil {
			unix.Pwrite(fd, b[:len(b)/2], off)
			return 0, err
		}
	}
	return unix.Pwrite(fd, b, off)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Append implements conversation.Store. It writes the event's file with
// one write call (plus an fsync when Durable) and then one line of the
// index cache.
func (s *Store) Append(_ context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return conversation.Entry{}, conversation.ErrClosed
	}
	i := ent.Index
	if n := int(s.n.Load()); i != n {
		return conversation.Entry{}, fmt.Errorf("filestore: append at index %d of a log of %d events", i, n)
	}
	e = event.CompactArguments(e) // large tool-call arguments kept once
	if s.wb != nil {
		ent, err := s.journalAppend(ent, e)
		if err != nil {
			return conversation.Entry{}, fmt.Errorf("filestore: appending event %d: %w", i, err)
		}
		s.n.Add(1)
		return ent, nil
	}
	data, err := event.Append(s.buf[:0], e)
	if err != nil {
		return conversation.Entry{}, fmt.Errorf("filestore: encoding event %s: %w", ent.ID, err)
	}
	if cap(data) <= maxReusedBuf {
		s.buf = data
	}
	if err := writeNew(filepath.Join(s.eventsDir, eventFileName(i, ent.ID)), data, s.opts.Durable, false); err != nil {
		return conversation.Entry{}, fmt.Errorf("filestore: appending event %d: %w", i, err)
	}
	if s.opts.Durable {
		if err := syncDir(s.eventsDir); err != nil {
			// The log stays unchanged, so the next append takes index i.
			unix.Unlink(filepath.Join(s.eventsDir, eventFileName(i, ent.ID)))
			return conversation.Entry{}, fmt.Errorf("filestore: appending event %d: %w", i, err)
		}
	}
	ent.Size = len(data)
	s.writeIndexLine(&s.line, &ent, data)
	s.n.Add(1)
	return ent, nil
}

// maxReusedBuf is the largest encoding buffer an append keeps for the next.
const maxReusedBuf = 1 << 20

// indexFlushBytes is how many bytes of index-cache lines a store buffers
// before writing them. Lines lost in a crash only mean that the next open
// reads those events' files.
const indexFlushBytes = 16 << 10

// writeIndexLine adds the line of ent, whose file holds data, to the index-cache buffer *buf, writing the
// buffer out when it is full. A failure only costs a slower next open, so
// it is logged, not returned.
func (s *Store) writeIndexLine(buf *[]byte, ent *conversation.Entry, data []byte) {
	if s.indexFD < 0 {
		return
	}
	var ok bool
	if *buf, ok = appendIndexLine(*buf, ent, checksum(data)); ok && len(*buf) >= indexFlushBytes {
		s.flushIndex(buf)
	}
}

// flushIndex writes out the buffered index-cache lines.
func (s *Store) flushIndex(buf *[]byte) {
	if s.indexFD < 0 || len(*buf) == 0 {
		return
	}
	for rest := *buf; len(rest) > 0; {
		n, err := unix.Write(s.indexFD, rest)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			slog.Warn("filestore: event index cache write failed", "err", err)
			unix.Close(s.indexFD)
			s.indexFD = -1
			break
		}
		rest = rest[n:]
	}
	*buf = (*buf)[:0]
}

// Raw implements conversation.Store. It reads the event's file with one
// read call.
func (s *Store) Raw(_ context.Context, ent conversation.Entry) ([]byte, error) {
	i := ent.Index
	if n := int(s.n.Load()); i < 0 || i >= n {
		return nil, fmt.Errorf("%w: %d of %d", conversation.ErrIndexOutOfRange, i, n)
	}
	if s.closed.Load() {
		return nil, conversation.ErrClosed
	}
	if data, ok := s.pendingData(i); ok {
		return data, nil
	}
	// Size is known, so one read usually does it; one byte more detects a
	// file that grew behind our back.
	s.fdMu.RLock()
	defer s.fdMu.RUnlock()
	if s.eventsFD < 0 {
		return nil, conversation.ErrClosed
	}
	buf, err := readAt(s.eventsFD, appendEventFileName(nil, i, ent.ID), make([]byte, 0, ent.Size+1))
	if err != nil {
		return nil, fmt.Errorf("filestore: %s: %w", s.eventsDir, err)
	}
	n := len(buf)
	if i < len(s.sums) && s.sums[i].ok {
		if n != ent.Size {
			return nil, &DamageError{Dir: s.dir, Index: i, File: eventFileName(i, ent.ID), Err: fmt.Errorf("%d bytes, %d when it was written", n, ent.Size)}
		}
		if crc := checksum(buf[:n]); crc != s.sums[i].crc {
			return nil, &DamageError{Dir: s.dir, Index: i, File: eventFileName(i, ent.ID), Err: fmt.Errorf("content changed since it was written (CRC-32C %08x, was %08x)", crc, s.sums[i].crc)}
		}
	}
	return buf[:n:n], nil
}

// ReadEvent implements conversation.EventReader: the events a cache-less
// open decoded are handed out once without decoding them again.
func (s *Store) ReadEvent(ctx context.Context, ent conversation.Entry) (event.Event, error) {
	i := ent.Index
	k, ok := s.takeKept(i) // decoded by the open
	if !ok {
		raw, err := s.Raw(ctx, ent)
		if err != nil {
			return nil, err
		}
		k.ev, k.err = event.Unmarshal(raw)
	}
	if k.err != nil {
		return nil, fmt.Errorf("filestore: event %d (%s): %w", i, filepath.Join(s.eventsDir, eventFileName(i, ent.ID)), k.err)
	}
	return k.ev, nil
}

// Dir returns the conversation directory.
func (s *Store) Dir() string { return s.dir }

var _ conversation.KindedStore = (*Store)(nil)

// StoreKind implements conversation.KindedStore.
func (s *Store) StoreKind() string { return "file" }

// Close implements Store: it releases the lock.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopWriteBehind()
	s.dropKept()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.wb == nil || s.wb.err == nil {
		// Every event has its file: the marker may say how many.
		s.writeLengthMarker(int(s.n.Load()))
	}
	s.flushIndex(&s.line)
	if s.indexFD >= 0 {
		unix.Close(s.indexFD)
		s.indexFD = -1
	}
	s.fdMu.Lock()
	unix.Close(s.eventsFD)
	s.eventsFD = -1
	s.fdMu.Unlock()
	return s.lock.Close()
}

var (
	_ conversation.DirStore    = (*Store)(nil)
	_ conversation.EventReader = (*Store)(nil)
)

// openStore is Backend.Open's Open.
func openStore(dir string, opts *Options) (conversation.Store, error) { return Open(dir, opts) }
