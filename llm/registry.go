package llm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Registry errors.
var (
	ErrDuplicateUsageID = errors.New("llm: usage id already registered")
	ErrUnknownUsageID   = errors.New("llm: usage id not registered")
)

// Registry holds a conversation's LLMs by usage id ("default" for the
// agent, "condenser", "ask-agent-llm", ...), so their metrics can be
// collected and restored together. Each LLM keeps its own metrics. It is
// safe for concurrent use.
type Registry struct {
	mu          sync.Mutex
	llms        map[string]*LLM
	subscribers []func(*LLM)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{llms: map[string]*LLM{}} }

// Add registers l under its usage id and tells the subscribers. A usage id
// can be registered once.
func (r *Registry) Add(l *LLM) error {
	r.mu.Lock()
	id := l.UsageID()
	if _, ok := r.llms[id]; ok {
		r.mu.Unlock()
		return fmt.Errorf("%w: %q (use a different usage_id, or Get the registered one)", ErrDuplicateUsageID, id)
	}
	r.llms[id] = l
	subs := slices.Clone(r.subscribers)
	r.mu.Unlock()
	for _, f := range subs {
		f(l)
	}
	return nil
}

// Get returns the LLM registered under usageID.
func (r *Registry) Get(usageID string) (*LLM, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.llms[usageID]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownUsageID, usageID)
	}
	return l, nil
}

// Remove unregisters usageID; removing an unknown id does nothing.
func (r *Registry) Remove(usageID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.llms, usageID)
}

// UsageIDs returns the registered usage ids, sorted.
func (r *Registry) UsageIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.llms))
}

// Subscribe calls f with every LLM added from now on; the conversation's
// stats use it to restore persisted metrics into a resumed LLM.
func (r *Registry) Subscribe(f func(*LLM)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subscribers = append(r.subscribers, f)
}

// Metrics returns a copy of every LLM's metrics by usage id: the
// reference's ConversationStats.usage_to_metrics.
func (r *Registry) Metrics() map[string]Metrics {
	r.mu.Lock()
	llms := maps.Clone(r.llms)
	r.mu.Unlock()
	out := make(map[string]Metrics, len(llms))
	for id, l := range llms {
		out[id] = l.Metrics()
	}
	return out
}
