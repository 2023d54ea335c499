// Package condenser shortens the model's view of a long conversation so it
// keeps fitting the model's context window.
//
// A [View] is built from a conversation's events: Condensation events are
// applied as the view is built (forgotten events dropped, a summary
// inserted), so the event log itself is never rewritten. A [Condenser]
// looks at a view and either leaves it alone or returns a new
// Condensation event for the caller to append to the log.
//
// The condensers are the reference's kinds, serialised as it does:
// [NoOp] ("NoOpCondenser"), [Pipeline] ("PipelineCondenser") and
// [LLMSummarizing] ("LLMSummarizingCondenser"), which asks an LLM to
// summarise the events it forgets.
//
// # Using a condenser in the agent loop
//
// Before each LLM call, build the view from the active branch (including
// CondensationRequest and Condensation events) and call Condense. A
// non-nil Condensation is appended to the log instead of calling the
// model; the next step sees the shorter view. When the model reports a
// context-window error (llm.ErrContextWindowExceeded) or a malformed
// history, append an event.CondensationRequest if HandlesRequests is true,
// and fail otherwise.
package condenser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Condenser shortens a view. Implementations are immutable configurations,
// safe for concurrent use.
type Condenser interface {
	// Condense returns nil to leave view as it is, or a new Condensation
	// (with a fresh id) to append to the log. agentLLM is the agent's model;
	// a condenser may use its context window (when it has a
	// Features() llm.Features method) to decide. view must not be modified.
	// An error means the conversation cannot go on (a hard requirement that
	// could not be met).
	Condense(ctx context.Context, view *View, agentLLM llm.Model) (*event.Condensation, error)
	// HandlesRequests reports whether the condenser acts on
	// CondensationRequests; the agent emits them only if it does.
	HandlesRequests() bool
}

// ErrNoCondensation means a condenser that had to condense could not.
var ErrNoCondensation = errors.New("condenser: no condensation available")

// NoOp never condenses (kind NoOpCondenser).
type NoOp struct{}

// Condense implements Condenser: it returns nil.
func (NoOp) Condense(context.Context, *View, llm.Model) (*event.Condensation, error) {
	return nil, nil
}

// HandlesRequests implements Condenser: false.
func (NoOp) HandlesRequests() bool { return false }

// Pipeline runs its condensers in order, stopping at the first that
// returns a Condensation (kind PipelineCondenser).
type Pipeline struct {
	Condensers List `json:"condensers"`
}

// Condense implements Condenser.
func (p *Pipeline) Condense(ctx context.Context, view *View, agentLLM llm.Model) (*event.Condensation, error) {
	for i, c := range p.Condensers {
		cond, err := c.Condense(ctx, view, agentLLM)
		if err != nil {
			return nil, fmt.Errorf("pipeline condenser %d: %w", i, err)
		}
		if cond != nil {
			return cond, nil
		}
	}
	return nil, nil
}

// HandlesRequests implements Condenser: true if any member handles them.
func (p *Pipeline) HandlesRequests() bool {
	for _, c := range p.Condensers {
		if c.HandlesRequests() {
			return true
		}
	}
	return false
}

// List is a list of condensers, each written with its kind. It encodes
// nil as [].
type List []Condenser

// MarshalJSON implements json.Marshaler.
func (l List) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, c := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = event.AppendKinded(b, c); err != nil {
			return nil, fmt.Errorf("condenser %d: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *List) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return fmt.Errorf("condensers: %w", err)
	}
	out := make(List, 0, len(raws))
	for i, r := range raws {
		c, err := Decode(r)
		if err != nil {
			return fmt.Errorf("condenser %d: %w", i, err)
		}
		out = append(out, c)
	}
	*l = out
	return nil
}

// Decode reads a kind-tagged condenser, checking its configuration.
func Decode(data []byte) (Condenser, error) {
	c, err := event.DecodeKinded[Condenser](data)
	if err != nil {
		return nil, err
	}
	if v, ok := c.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func init() {
	event.RegisterKind[NoOp]("NoOpCondenser")
	event.RegisterKind[Pipeline]("PipelineCondenser")
	event.RegisterKind[LLMSummarizing]("LLMSummarizingCondenser")
}
