package conversation

import (
	"errors"

	"github.com/gohands/gohands/event"
)

// Store keeps one conversation's base state and its append-only event log.
// Every store keeps the same in-memory index, so lookups by index and by id
// are O(1) and a search costs O(page), whatever the store.
//
// Stores are safe for concurrent use. Appends are serialised; reads never
// wait for an append's I/O.
type Store interface {
	// ReadBase returns the saved base state, or nil if there is none.
	ReadBase() ([]byte, error)
	// WriteBase replaces the saved base state atomically.
	WriteBase(data []byte) error

	// Append encodes e and adds it at index Len(). It fails with
	// ErrDuplicateID or ErrUnknownParent, and leaves the log unchanged on
	// any error. It does not stamp parent ids: State does.
	Append(e event.Event) (Entry, error)
	// Len returns the number of events.
	Len() int
	// Entry returns the entry at index i.
	Entry(i int) (Entry, error)
	// Lookup returns the index of the event with the given id.
	Lookup(id string) (int, bool)
	// Entries returns all entries in log order. The slice is shared: do not
	// modify it.
	Entries() []Entry
	// Raw returns the event JSON at index i, as stored.
	Raw(i int) ([]byte, error)
	// Event decodes the event at index i.
	Event(i int) (event.Event, error)
	// Search returns one page of the entries matching q.
	Search(q Query) (Page, error)

	// Close releases the store (and, for a file store, its lock).
	Close() error
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
	Open(id string) (Store, error)
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
