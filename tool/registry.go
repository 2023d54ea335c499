package tool

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/gohands/gohands/event"
)

// Spec names a tool and its parameters in plain JSON, so tool lists cross
// process boundaries (the reference's Tool spec).
type Spec struct {
	Name   string                 `json:"name"`
	Params event.Map[string, any] `json:"params"`
}

// SecretLookup returns the value of the named secret.
type SecretLookup func(name string) (value string, ok bool)

// Context is what a tool factory gets from the conversation it serves.
type Context struct {
	// WorkingDir is the workspace directory tools operate in.
	WorkingDir string
	// ConversationDir is the conversation's persistence directory, or ""
	// when the conversation is not persisted.
	ConversationDir string
	// Secrets looks up secrets by name; nil means there are none.
	Secrets SecretLookup
}

// Factory makes the tools of one spec. params is the spec's params object
// (never nil; "{}" when empty). A factory may return several tools (a tool
// set).
type Factory func(ctx Context, params json.RawMessage) ([]Tool, error)

var registry = struct {
	mu sync.RWMutex
	m  map[string]Factory
}{m: make(map[string]Factory)}

// Register makes name resolvable by Resolve. It panics if name is taken.
func Register(name string, f Factory) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, ok := registry.m[name]; ok {
		panic(fmt.Sprintf("tool.Register: %q already registered", name))
	}
	registry.m[name] = f
}

// Registered returns the registered tool names, sorted.
func Registered() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve makes the tools of spec.
func Resolve(ctx Context, spec Spec) ([]Tool, error) {
	registry.mu.RLock()
	f, ok := registry.m[spec.Name]
	registry.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("tool %q is not registered", spec.Name)
	}
	params := []byte("{}")
	if len(spec.Params) > 0 {
		var err error
		if params, err = json.Marshal(spec.Params); err != nil {
			return nil, fmt.Errorf("tool %q: params: %w", spec.Name, err)
		}
	}
	tools, err := f(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", spec.Name, err)
	}
	return tools, nil
}
