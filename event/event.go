package event

import (
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Source says who produced an event.
type Source string

// Event sources.
const (
	SourceAgent       Source = "agent"
	SourceUser        Source = "user"
	SourceEnvironment Source = "environment"
	SourceHook        Source = "hook"
)

// RootParentID is the parent_id that marks an event as a root of the
// conversation tree. It is never a valid event id.
const RootParentID = "__root__"

// Base holds the fields every event has. Concrete events embed it first so
// the fields come first on the wire, as in the reference.
type Base struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Source    Source `json:"source"`
	ParentID  string `json:"parent_id,omitempty"`
}

// EventBase returns b; it makes every struct embedding Base an Event.
func (b *Base) EventBase() *Base { return b }

// Event is implemented by pointers to every event type.
type Event interface {
	EventBase() *Base
}

// NewBase returns a Base with a fresh id, the current time and source.
func NewBase(source Source) Base {
	return Base{ID: NewID(), Timestamp: Now(), Source: source}
}

// NewID returns a new event id: a lowercase dashed random UUID.
func NewID() string { return uuid.NewString() }

// Now returns the current time as an event timestamp.
func Now() string { return FormatTime(time.Now()) }

// FormatTime formats t as the reference formats event timestamps: local time
// without offset, "T" separator, and microseconds only when non-zero
// (Python's datetime.isoformat). Timestamps compare correctly as strings.
func FormatTime(t time.Time) string {
	t = t.Local()
	b := make([]byte, 0, 26)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		s := strconv.Itoa(us)
		for i := len(s); i < 6; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	return string(b)
}

// parseTime parses an event timestamp in local time. It accepts what
// FormatTime writes and ISO 8601 times with an offset.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, &time.ParseError{Layout: "2006-01-02T15:04:05.999999", Value: s}
}
