package conversation

import (
	"context"
	"errors"
	"iter"

	"github.com/gohands/gohands/event"
)

// Store keeps one conversation's base state and its append-only event log,
// as bytes: it is the I/O under a conversation's [Log], which keeps the
// log's index in memory, checks appends and answers lookups and searches
// the same way whatever the store. A store checks only what is its own:
// that an append comes at the index it expects.
//
// Stores are safe for concurrent use. Appends are serialised by the Log;
// reads never wait for an append's I/O.
type Store interface {
	// ReadBase returns the saved base state, or nil if there is none.
	ReadBase(ctx context.Context) ([]byte, error)
	// WriteBase replaces the saved base state atomically.
	WriteBase(ctx context.Context, data []byte) error

	// Load yields the entries of the events stored when the store was
	// opened, in log order from index 0, in one batch or more (see
	// ScanEntry). The Log takes each batch over: a store does not use it
	// again. Load is called once, before the first Append; a store may
	// refuse a second call.
	Load(ctx context.Context) iter.Seq2[[]Entry, error]
	// Append stores e, the event of entry ent, at index ent.Index, which
	// is the number of events stored, and returns ent with its Size: the
	// length of the JSON stored. It leaves the log unchanged on any
	// error. The Log has checked e's id and parent and stamped its parent
	// id.
	Append(ctx context.Context, ent Entry, e event.Event) (Entry, error)
	// Raw returns the JSON of the event of ent, as stored.
	Raw(ctx context.Context, ent Entry) ([]byte, error)

	// Close releases the store (and, for a file store, its lock).
	Close() error
}

// An EventReader is a Store that can return an event already decoded, as
// filestore.Store does for the events its open read and decoded anyway;
// Log.Event uses it instead of decoding Raw's bytes.
type EventReader interface {
	ReadEvent(ctx context.Context, ent Entry) (event.Event, error)
}

// A KindedStore names its kind ("file", "memory", "postgres"), which
// labels its append latency in metrics; a store that does not is "other".
type KindedStore interface {
	StoreKind() string
}

// A DirStore is a Store kept in a directory of its own, as
// filestore.Store is. The conversation records the directory
// (Fields.PersistenceDir) and gives it to tools (Session.Dir), which keep
// files of their own beside the events.
type DirStore interface {
	Store
	Dir() string
}

// A Backend keeps the stores of many conversations, by conversation id:
// filestore.Backend keeps them in a directory in the reference's layout.
// LocalOptions.Backend is how an application chooses where conversations
// live.
type Backend interface {
	// Open returns the store of conversation id (a dashed UUID), empty if
	// the conversation is new. The caller closes it.
	Open(ctx context.Context, id string) (Store, error)
}

// DefaultPageSize is the page size of a Query without a Limit.
const DefaultPageSize = 100

// Query selects events. Empty fields do not filter.
type Query struct {
	// Kind is an event kind name, e.g. "MessageEvent".
	Kind string
	// Source is the event source.
	Source event.Source
	// TimestampGTE and TimestampLT bound the timestamp, compared as strings
	// like the reference (event timestamps sort as strings).
	TimestampGTE, TimestampLT string
	// PageID is the id of the event the page starts at (a Page's
	// NextPageID).
	PageID string
	// Limit is the page size (DefaultPageSize if zero).
	Limit int
	// Descending walks the log from newest to oldest.
	Descending bool
}

// Page is one page of search results.
type Page struct {
	Entries []Entry
	// NextPageID is the id the next page starts at, or "" on the last page.
	NextPageID string
}

// Errors returned by stores.
var (
	ErrDuplicateID     = errors.New("conversation: duplicate event id")
	ErrUnknownParent   = errors.New("conversation: unknown parent event")
	ErrIndexOutOfRange = errors.New("conversation: event index out of range")
	ErrNotFound        = errors.New("conversation: event not found")
	ErrLocked          = errors.New("conversation: locked by another process")
	ErrClosed          = errors.New("conversation: store closed")
)
