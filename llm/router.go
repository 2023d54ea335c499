package llm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/gohands/gohands/event"
)

// Router is a Model that picks one of several models for each call. It is
// the reference's RouterLLM: the paper's example sends conversations with
// images to a multimodal model and the rest to a cheaper one.
type Router struct {
	// Name identifies the router in logs.
	Name string
	// Models are the models to route between, by key.
	Models map[string]Model
	// Select returns the key of the model for a call.
	Select func(ctx context.Context, messages []event.Message, tools []ToolSpec) (string, error)

	mu     sync.Mutex
	active string
}

var _ Model = (*Router)(nil)

// Completion implements Model: it selects a model and delegates to it.
func (r *Router) Completion(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions) (*Response, error) {
	key, err := r.Select(ctx, messages, tools)
	if err != nil {
		return nil, fmt.Errorf("router %s: %w", r.Name, err)
	}
	m, ok := r.Models[key]
	if !ok {
		return nil, fmt.Errorf("router %s: selected unknown model %q", r.Name, key)
	}
	r.mu.Lock()
	r.active = key
	r.mu.Unlock()
	return m.Completion(ctx, messages, tools, opts)
}

// Active returns the key of the model used by the latest call.
func (r *Router) Active() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active
}

// Keys of a multimodal router's models.
const (
	RoutePrimary   = "primary"
	RouteSecondary = "secondary"
)

// NewMultimodalRouter returns the reference's MultimodalRouter: calls whose
// messages contain an image, or whose text is too long for the secondary
// model's context window, go to primary (the capable multimodal model);
// the rest go to secondary (the cheap one). The secondary's context window
// is known when it is an *LLM; the text length is estimated at four
// characters a token.
func NewMultimodalRouter(primary, secondary Model) *Router {
	return &Router{
		Name:   "multimodal_router",
		Models: map[string]Model{RoutePrimary: primary, RouteSecondary: secondary},
		Select: func(_ context.Context, messages []event.Message, _ []ToolSpec) (string, error) {
			chars := 0
			for _, m := range messages {
				for _, c := range m.Content {
					if c.Type == event.ContentImage {
						return RoutePrimary, nil
					}
					chars += len(c.Text)
				}
			}
			if l, ok := secondary.(*LLM); ok {
				if w := l.Features().ContextWindow; w > 0 && chars/4 > w {
					return RoutePrimary, nil
				}
			}
			return RouteSecondary, nil
		},
	}
}

// NewRandomRouter returns a router that picks one of models uniformly at
// random for each call (the reference's RandomRouter).
func NewRandomRouter(models map[string]Model) *Router {
	keys := slices.Sorted(maps.Keys(models))
	return &Router{
		Name:   "random_router",
		Models: models,
		Select: func(context.Context, []event.Message, []ToolSpec) (string, error) {
			if len(keys) == 0 {
				return "", errors.New("no models to route to")
			}
			return keys[rand.IntN(len(keys))], nil
		},
	}
}

// Fallback is a Model that tries its models in order, moving to the next
// when one fails in a way another provider might not: rate limits, server
// errors, timeouts, dropped connections and empty replies. Bad requests and
// context-window errors would fail the same everywhere and are returned at
// once.
type Fallback struct {
	Models []Model
	// ShouldFallback decides which errors move to the next model; nil
	// means the transient ones listed above.
	ShouldFallback func(error) bool
}

var _ Model = (*Fallback)(nil)

// NewFallback returns a Fallback over models, first preferred.
func NewFallback(models ...Model) *Fallback { return &Fallback{Models: models} }

// Completion implements Model.
func (f *Fallback) Completion(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions) (*Response, error) {
	if len(f.Models) == 0 {
		return nil, errors.New("llm: fallback chain has no models")
	}
	should := f.ShouldFallback
	if should == nil {
		should = retryable
	}
	// Once part of a reply has been streamed, moving on would stream a
	// second reply after it, so the chain stops there.
	streamed := false
	if opts != nil && opts.OnDelta != nil {
		o := *opts
		o.OnDelta = func(d Delta) error { streamed = true; return opts.OnDelta(d) }
		opts = &o
	}
	var errs []error
	for i, m := range f.Models {
		resp, err := m.Completion(ctx, messages, tools, opts)
		if err == nil {
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("model %d: %w", i, err))
		if ctx.Err() != nil || streamed || !should(err) {
			break
		}
	}
	return nil, errors.Join(errs...)
}
