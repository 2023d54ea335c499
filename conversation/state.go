package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// Options configure a State. A nil *Options is the default.
type Options struct {
	// Cipher encrypts secrets in the base state and decrypts them on load.
	// Without one, secrets are redacted on disk and lost on reload, as in
	// the reference.
	Cipher *secret.Cipher
	// OnEvent is called with each appended event, after it is stored.
	OnEvent func(event.Event)
	// OnChange is called for each changed field with its key (the JSON field
	// name) and new value (redacted JSON), after the change is saved. Moves
	// of the event tree's HEAD (leaf_event_id, head_is_empty) are not
	// reported, as in the reference.
	OnChange func(key string, value json.RawMessage)
	// RecordChanges appends a ConversationStateUpdateEvent {key, value} to
	// the log for each changed field, in the same commit as the change, as
	// the reference's agent server does, so that a client following the
	// events (a WebSocket, a reconnecting client) sees every status change.
	// HEAD moves and secret registry changes are not recorded, as in the
	// reference.
	RecordChanges bool
	// RestartNote, if set, returns what to add to the restart error of an
	// action a crash cut short (RecoverRunning, AnswerUnanswered): what the
	// model needs to pick the work up. "" adds nothing.
	RestartNote func(toolName string, action json.RawMessage) string
}

// State is a conversation's mutable state: its Fields and its event log.
//
// All changes go through one FIFO lock, in the order they were requested:
// state-only changes (Update) and event appends (Append), or both at once
// (Do). Reads never wait for a write in progress: Fields returns an
// immutable snapshot that is swapped atomically on commit, and the log is
// readable while an append is written.
//
// Callbacks (Options.OnEvent, Options.OnChange) run after the change is
// committed, outside the lock, in commit order; a change's callbacks have
// run when the call that made it returns. A callback may read the State but
// must not change it, which would deadlock.
type State struct {
	log *Log
	// ctx is what the store's writes get: the context of Create or Open
	// without its cancellation. A write runs to its end whatever happens
	// to the caller that asked for it: an append cancelled half way would
	// leave the log in doubt (pgstore gives a conversation up after a
	// failed write). Stores bound their own I/O (pgstore.Options.Timeout).
	ctx    context.Context
	cipher *secret.Cipher
	opts   Options

	mu        fifoMutex
	fields    atomic.Pointer[Fields]
	saved     []member  // members as last written, under mu
	enc       slotCache // under mu
	headDirty bool      // HEAD moved since the base state was written; under mu
	// deferBase holds back writing the base state of a conversation being
	// created until its first message is stored (finishCreate); under mu.
	deferBase bool

	pendMu  sync.Mutex
	pending []notice
	cbMu    sync.Mutex
}

type notice struct {
	ev    event.Event
	key   string
	value json.RawMessage
}

// Errors returned by Create and Open.
var (
	ErrExists   = errors.New("conversation: already exists")
	ErrNoState  = errors.New("conversation: no saved state")
	ErrMismatch = errors.New("conversation: id does not match")
)

// Create starts a new conversation in store with the given fields and writes
// its base state at once. It fails with ErrExists if store already holds a
// state. Events already in store (the log of a creation interrupted before
// its base state was written, or the reference's bare log) are taken up:
// HEAD is their last event.
func Create(ctx context.Context, store Store, f *Fields, opts *Options) (*State, error) {
	return create(ctx, store, f, opts, false)
}

// create is Create; with deferBase set the base state is first written
// by finishCreate, so that the events stored meanwhile (the first message)
// are on disk before the conversation is.
func create(ctx context.Context, store Store, f *Fields, opts *Options, deferBase bool) (*State, error) {
	base, err := store.ReadBase(ctx)
	if err != nil {
		return nil, err
	}
	if len(base) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrExists, f.ID)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	s, err := newState(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	log := s.log
	f = f.clone()
	if ds, ok := store.(DirStore); ok && f.PersistenceDir == "" {
		f.PersistenceDir = ds.Dir()
	}
	if log.Len() > 0 {
		f.LeafEventID, f.HeadIsEmpty = resolveLeaf(log, &Fields{}), false
		for i := log.Len() - 1; i >= 0; i-- {
			if e, err := log.Entry(i); err == nil && e.Kind == event.KindMessage && e.Source == event.SourceUser {
				f.LastUserMessageID = e.ID
				break
			}
		}
	}
	if deferBase {
		ms, err := s.enc.encode(f, nil)
		if err != nil {
			return nil, err
		}
		s.saved, s.deferBase, s.headDirty = ms, true, true
	} else if err := s.save(f); err != nil {
		return nil, err
	}
	s.fields.Store(f)
	return s, nil
}

// finishCreate writes the base state that create deferred.
func (s *State) finishCreate() error {
	return s.Do(func(tx *Tx) error {
		s.deferBase, s.headDirty = false, true
		tx.shallow()
		tx.touched = true
		return nil
	})
}

// Open resumes the conversation saved in store. The event tree's HEAD is
// brought up to date with events appended after the base state was last
// written (gohands defers writing HEAD moves; see Append). It does not
// recover a conversation left running: call RecoverRunning for that.
func Open(ctx context.Context, store Store, opts *Options) (*State, error) {
	base, err := store.ReadBase(ctx)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(base)) == 0 {
		return nil, ErrNoState
	}
	s, err := newState(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	f, err := DecodeFields(base, s.cipher)
	if err != nil {
		return nil, err
	}
	if ms, err := s.enc.encode(f, nil); err == nil {
		s.saved = ms
	}
	if f.LeafEventID != "" {
		if _, ok := s.log.Lookup(f.LeafEventID); !ok {
			// The events after the HEAD's were lost or set aside
			// (filestore.Repair): continue from the last one there is.
			slog.Warn("conversation: the HEAD event is not in the log; continuing from the last event", "id", f.ID, "head", f.LeafEventID)
			f.LeafEventID = ""
			s.headDirty = true
		}
	}
	if leaf := fastForward(s.log, f.LeafEventID); leaf != f.LeafEventID {
		f.LeafEventID = leaf
		s.headDirty = true
	}
	s.fields.Store(f)
	return s, nil
}

// OpenID is Open that also checks the conversation's id.
func OpenID(ctx context.Context, store Store, id string, opts *Options) (*State, error) {
	s, err := Open(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	if got := s.Fields().ID; got != id {
		return nil, fmt.Errorf("%w: want %s, stored %s", ErrMismatch, id, got)
	}
	return s, nil
}

// newState loads the log of store into a new State.
func newState(ctx context.Context, store Store, opts *Options) (*State, error) {
	log, err := LoadLog(ctx, store)
	if err != nil {
		return nil, err
	}
	s := &State{log: log, ctx: context.WithoutCancel(ctx), mu: newFIFOMutex()}
	if opts != nil {
		s.opts = *opts
		s.cipher = opts.Cipher
	}
	return s, nil
}

// Fields returns the current fields. The value is an immutable snapshot:
// do not modify it.
func (s *State) Fields() *Fields { return s.fields.Load() }

// Events returns the event log. Append events through the State (Append,
// Do), which keeps HEAD.
func (s *State) Events() *Log { return s.log }

// Tx is one batch of changes made under the state's lock; see State.Do.
type Tx struct {
	s       *State
	f       *Fields
	own     int  // 0: f is the published snapshot; 1: a shallow copy; 2: a deep copy
	touched bool // fields other than HEAD may have changed
	events  []event.Event
	after   []func() event.Event // see AppendAfterChanges
}

// AppendAfterChanges appends the event that mk makes when the transaction
// commits, after the ConversationStateUpdateEvents of its field changes and
// before the changes are published: a reader who sees the new fields finds
// the event in the log, and the event follows the changes in the log and
// in time (mk runs then), as the reference orders a pause after its status
// change.
func (tx *Tx) AppendAfterChanges(mk func() event.Event) {
	tx.after = append(tx.after, mk)
}

// Fields returns the fields for modification. Changes are saved when the
// batch ends.
func (tx *Tx) Fields() *Fields {
	if tx.own < 2 {
		tx.f = tx.f.clone()
		tx.own = 2
	}
	tx.touched = true
	return tx.f
}

func (tx *Tx) shallow() *Fields {
	if tx.own == 0 {
		c := *tx.f
		tx.f = &c
		tx.own = 1
	}
	return tx.f
}

// Append stamps e's parent id in place if it has none (the current HEAD, or
// "__root__" when the tree is empty but the log is not), stores it and
// advances HEAD to it, unless it is a ConversationStateUpdateEvent, which
// is not a tree node. A user MessageEvent also becomes LastUserMessageID.
func (tx *Tx) Append(e event.Event) (event.Event, error) {
	b := e.EventBase()
	stamped := false
	if b.ParentID == "" {
		parent := resolveLeaf(tx.s.log, tx.f)
		if parent == "" && tx.s.log.Len() > 0 {
			parent = event.RootParentID
		}
		b.ParentID, stamped = parent, true
	}
	ent, err := tx.s.log.Append(tx.s.ctx, e)
	if err != nil {
		if stamped {
			b.ParentID = ""
		}
		return nil, err
	}
	tx.events = append(tx.events, e)
	if ent.Kind != event.KindConversationStateUpdate {
		f := tx.shallow()
		f.LeafEventID, f.HeadIsEmpty = ent.ID, false
		tx.s.headDirty = true
	}
	if ent.Kind == event.KindMessage && ent.Source == event.SourceUser {
		tx.shallow().LastUserMessageID = ent.ID
		tx.touched = true
	}
	return e, nil
}

// Do runs fn with the state locked, then saves the changed fields once and
// fires the callbacks. Events appended by fn stay appended even if fn
// returns an error (the log is append-only); field changes are committed
// too, unless they are invalid.
func (s *State) Do(fn func(tx *Tx) error) error {
	s.mu.Lock()
	tx := &Tx{s: s, f: s.fields.Load()}
	ferr := fn(tx)
	notes, err := s.commit(tx)
	s.enqueue(notes)
	s.mu.Unlock()
	s.deliver()
	if ferr != nil {
		return ferr
	}
	return err
}

// Update changes fields only.
func (s *State) Update(fn func(f *Fields) error) error {
	return s.Do(func(tx *Tx) error { return fn(tx.Fields()) })
}

// Append appends one event; see Tx.Append. HEAD moves are not written to
// base_state.json at once: they are saved with the next change of another
// field, by Flush or Close, and recomputed from the log by Open after a
// crash. This keeps an append to one file write.
func (s *State) Append(e event.Event) (event.Event, error) {
	var out event.Event
	err := s.Do(func(tx *Tx) error {
		var err error
		out, err = tx.Append(e)
		return err
	})
	return out, err
}

// Flush writes the base state if HEAD moved since it was last written.
func (s *State) Flush() error {
	return s.Do(func(tx *Tx) error {
		if s.headDirty {
			tx.shallow() // else commit has nothing to write
			tx.touched = true
		}
		return nil
	})
}

// Close flushes the state and closes its store.
func (s *State) Close() error {
	ferr := s.Flush()
	if err := s.log.store.Close(); err != nil {
		return err
	}
	return ferr
}

// setStatusUnsaved sets the execution status after the store failed to
// take it: in memory, and counted as saved, so that the next write of the
// base state (Flush, or any change) stores it and the next status change
// is recorded against it.
func (s *State) setStatusUnsaved(st ExecutionStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := *s.fields.Load()
	if f.ExecutionStatus == st {
		return
	}
	f.ExecutionStatus = st
	if ms, err := s.enc.encode(&f, nil); err == nil {
		s.saved = ms
	}
	s.headDirty = true
	s.fields.Store(&f)
}

// commit publishes tx's fields and returns the notices to deliver. Called
// with mu held.
func (s *State) commit(tx *Tx) ([]notice, error) {
	notes := make([]notice, 0, len(tx.events))
	for _, e := range tx.events {
		notes = append(notes, notice{ev: e})
	}
	if tx.own == 0 && len(tx.after) == 0 {
		return notes, nil
	}
	if !tx.touched {
		err := tx.appendAfter(&notes)
		s.fields.Store(tx.f)
		return notes, err
	}
	if err := tx.f.Validate(); err != nil {
		// Keep the HEAD moves of appended events; drop the invalid change.
		cur := *s.fields.Load()
		cur.LeafEventID, cur.HeadIsEmpty, cur.LastUserMessageID = tx.f.LeafEventID, tx.f.HeadIsEmpty, tx.f.LastUserMessageID
		s.fields.Store(&cur)
		return notes, err
	}
	ms, err := s.enc.encode(tx.f, nil)
	if err != nil {
		return notes, err
	}
	changed := diffMembers(s.saved, ms)
	if (len(changed) > 0 || s.headDirty) && !s.deferBase {
		if err := s.write(tx.f, ms); err != nil {
			return notes, err
		}
	}
	s.saved = ms
	// The change events are appended before the fields are published, so
	// that a reader who sees a new status finds its event in the log (a
	// client that saw "finished" and then read the events missed the
	// last one while the append was on its way to disk).
	var rerr error
	for _, m := range changed {
		if m.key == "leaf_event_id" || m.key == "head_is_empty" {
			continue
		}
		notes = append(notes, notice{key: m.key, value: m.val})
		// The reference changes the secret registry in place, which
		// records nothing.
		if s.opts.RecordChanges && m.key != "secret_registry" {
			n, err := s.recordChange(tx.f, m)
			if err != nil {
				rerr = err
				break
			}
			notes = append(notes, n)
		}
	}
	if rerr == nil {
		rerr = tx.appendAfter(&notes)
	}
	s.fields.Store(tx.f)
	return notes, rerr
}

// appendAfter appends the events of AppendAfterChanges, adding their
// notices to notes. Called by commit with mu held.
func (tx *Tx) appendAfter(notes *[]notice) error {
	for _, mk := range tx.after {
		e, err := tx.Append(mk())
		if err != nil {
			return err
		}
		*notes = append(*notes, notice{ev: e})
	}
	return nil
}

// recordChange appends the ConversationStateUpdateEvent of one changed
// member. Called with mu held, before f is published.
func (s *State) recordChange(f *Fields, m member) (notice, error) {
	e := &event.ConversationStateUpdateEvent{
		Base: event.NewBase(event.SourceEnvironment), Key: m.key, Value: json.RawMessage(m.val),
	}
	e.ParentID = resolveLeaf(s.log, f)
	if e.ParentID == "" && s.log.Len() > 0 {
		e.ParentID = event.RootParentID
	}
	if _, err := s.log.Append(s.ctx, e); err != nil {
		return notice{}, fmt.Errorf("conversation: recording the change of %s: %w", m.key, err)
	}
	return notice{ev: e}, nil
}

// save writes f as the base state.
func (s *State) save(f *Fields) error {
	ms, err := s.enc.encode(f, nil)
	if err != nil {
		return err
	}
	if err := s.write(f, ms); err != nil {
		return err
	}
	s.saved = ms
	return nil
}

// write writes the base state: ms (redacted) as it is, or re-encoded with
// the cipher.
func (s *State) write(f *Fields, ms []member) error {
	if s.cipher != nil {
		var err error
		if ms, err = s.enc.encode(f, s.cipher); err != nil {
			return err
		}
	}
	if err := s.log.store.WriteBase(s.ctx, joinMembers(ms)); err != nil {
		return err
	}
	s.headDirty = false
	return nil
}

// diffMembers returns the members of b that are new or differ from a, plus
// an empty-valued member for each key of a that b lacks (a field that
// became null).
func diffMembers(a, b []member) []member {
	old := make(map[string][]byte, len(a))
	for _, m := range a {
		old[m.key] = m.val
	}
	var out []member
	for _, m := range b {
		if v, ok := old[m.key]; !ok || !bytes.Equal(v, m.val) {
			out = append(out, m)
		}
		delete(old, m.key)
	}
	for _, m := range a {
		if _, gone := old[m.key]; gone {
			out = append(out, member{m.key, []byte("null")})
		}
	}
	return out
}

// enqueue queues notices for delivery. Called with mu held, so notices
// queue in commit order.
func (s *State) enqueue(notes []notice) {
	if len(notes) == 0 || s.opts.OnEvent == nil && s.opts.OnChange == nil {
		return
	}
	s.pendMu.Lock()
	s.pending = append(s.pending, notes...)
	s.pendMu.Unlock()
}

// deliver delivers queued notices in order, outside mu. Whoever holds cbMu
// delivers everything queued so far, so when deliver returns, the caller's
// own notices have been delivered (by it or by an earlier caller).
func (s *State) deliver() {
	if s.opts.OnEvent == nil && s.opts.OnChange == nil {
		return
	}
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	s.pendMu.Lock()
	batch := s.pending
	s.pending = nil
	s.pendMu.Unlock()
	for _, n := range batch {
		switch {
		case n.ev != nil && s.opts.OnEvent != nil:
			s.opts.OnEvent(n.ev)
		case n.ev == nil && s.opts.OnChange != nil:
			s.opts.OnChange(n.key, n.value)
		}
	}
}
