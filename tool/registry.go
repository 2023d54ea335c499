package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"
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
	// ConversationID is the conversation's id ("" when unknown).
	ConversationID string
	// ConversationDir is the conversation's persistence directory, or ""
	// when the conversation is not persisted.
	ConversationDir string
	// Secrets looks up secrets by name; nil means there are none.
	Secrets SecretLookup
	// SecretEnv returns the secrets a shell command mentions, as the
	// environment variables to export before it runs; nil means none.
	SecretEnv func(command string) map[string]string
	// Mask hides secret values in tool output; nil means no masking.
	Mask func(text string) string
	// Partial returns how many bytes at the end of text may begin a secret
	// value: a tool returning a stream in pieces holds them back until the
	// next piece, so Mask sees every value whole. nil means none.
	Partial func(text string) int
	// PartialStart returns how many bytes at the start of text may end a
	// secret value: a tool that dropped the output before text (to bound
	// its memory) drops them too. nil means none.
	PartialStart func(text string) int
	// Conversation is the conversation the tools work in, for tools that
	// consult other models or switch the agent's; nil means none.
	Conversation Conversation
	// SubAgentFiles are the sub-agent definition files (Markdown) the
	// conversation's plugins bring, the first of a name winning; package
	// tools/task offers them.
	SubAgentFiles []string
}

// Conversation is what a tool may ask of the conversation it works in.
type Conversation interface {
	// Consult asks the user's saved LLM profile named profile for one
	// reply to msgs, with no tools and none of the conversation,
	// accounting its cost under usageID.
	Consult(ctx context.Context, profile, usageID string, msgs []event.Message) (event.Message, error)
	// SwitchProfile switches the agent to the LLM profile name from its
	// next step on and returns the profile's model.
	SwitchProfile(ctx context.Context, name string) (model string, err error)
	// ProfileNames lists the saved LLM profiles, sorted.
	ProfileNames() []string
	// Profile describes the saved LLM profile name.
	Profile(name string) (ProfileInfo, error)
	// Events returns the events the agent sees (its condensed view).
	Events() ([]event.Event, error)
}

// ProfileInfo describes a saved LLM profile.
type ProfileInfo struct {
	Model, BaseURL string
	// Vision reports whether the model takes images.
	Vision bool
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

// ErrNotRegistered is returned (wrapped) by Resolve for a spec whose name
// has no registered factory.
var ErrNotRegistered = errors.New("tool: not registered")

// notRegisteredError keeps the reference's wording, so users of both
// recognise it, and matches ErrNotRegistered.
type notRegisteredError struct{ name string }

func (e notRegisteredError) Error() string {
	return fmt.Sprintf("ToolDefinition '%s' is not registered", e.name)
}

func (e notRegisteredError) Unwrap() error { return ErrNotRegistered }

// Resolve makes the tools of spec with the factory registered under
// spec.Name, handing it ctx and the spec's params as JSON.
//
// The param "response_schema" is handled here for every tool, as in the
// reference: it is not passed to the factory, the spec must then make
// exactly one tool, and that tool gets the schema's fields (see
// WithResponseSchema).
func Resolve(ctx Context, spec Spec) ([]Tool, error) {
	registry.mu.RLock()
	f, ok := registry.m[spec.Name]
	registry.mu.RUnlock()
	if !ok {
		if cs := ClientSpecOf(spec); cs != nil {
			t, err := NewClientTool(cs)
			if err != nil {
				return nil, err
			}
			return []Tool{t}, nil
		}
		return nil, notRegisteredError{spec.Name}
	}
	p := spec.Params
	var response map[string]any
	if rs, ok := p[ResponseSchemaParam]; ok {
		p = maps.Clone(p)
		delete(p, ResponseSchemaParam)
		data, err := json.Marshal(rs)
		if err == nil {
			response, err = DecodeSchema(data)
		}
		if err != nil {
			return nil, fmt.Errorf("tool %q: response_schema: %w", spec.Name, err)
		}
	}
	params := []byte("{}")
	if len(p) > 0 {
		var err error
		if params, err = json.Marshal(p); err != nil {
			return nil, fmt.Errorf("tool %q: params: %w", spec.Name, err)
		}
	}
	tools, err := f(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", spec.Name, err)
	}
	if response != nil {
		if len(tools) != 1 {
			CloseAll(tools)
			return nil, fmt.Errorf("tool %q: response_schema needs a spec giving one tool, not %d", spec.Name, len(tools))
		}
		t, err := WithResponseSchema(tools[0], response)
		if err != nil {
			CloseAll(tools)
			return nil, fmt.Errorf("tool %q: %w", spec.Name, err)
		}
		tools = []Tool{t}
	}
	return tools, nil
}

// DuplicateError reports tool names that more than one resolved tool uses.
// The model calls tools by name, so names must be unique in an agent.
type DuplicateError struct {
	Names []string // sorted
}

// Error implements error.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("duplicate tool names: %s", strings.Join(e.Names, ", "))
}

// ResolveAll resolves every spec in order and returns all their tools. If
// two tools share a name the error is a *DuplicateError. If any spec fails,
// the tools already made are closed (see Close) and the error returned.
func ResolveAll(ctx Context, specs []Spec) ([]Tool, error) {
	var all []Tool
	for _, spec := range specs {
		tools, err := Resolve(ctx, spec)
		if err != nil {
			CloseAll(all)
			return nil, err
		}
		all = append(all, tools...)
	}
	if err := CheckNames(all); err != nil {
		CloseAll(all)
		return nil, err
	}
	return all, nil
}

// CheckNames returns a *DuplicateError if two of tools share a name.
func CheckNames(tools []Tool) error {
	seen := make(map[string]int, len(tools))
	for _, t := range tools {
		seen[t.Name()]++
	}
	var dups []string
	for n, c := range seen {
		if c > 1 {
			dups = append(dups, n)
		}
	}
	if len(dups) == 0 {
		return nil
	}
	sort.Strings(dups)
	return &DuplicateError{Names: dups}
}

// Closer is implemented by tools that hold resources (processes, files,
// connections). The conversation that owns a tool closes it when the
// conversation is closed; *Typed implements it.
type Closer interface {
	Close() error
}

// CloseAll closes every tool that implements Closer and returns the
// errors joined.
func CloseAll(tools []Tool) error {
	var errs []error
	for _, t := range tools {
		if c, ok := t.(Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing tool %s: %w", t.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

var (
	camelWord  = regexp.MustCompile(`(.)([A-Z][a-z]+)`)
	camelUpper = regexp.MustCompile(`([a-z0-9])([A-Z])`)
)

// NameFromKind returns the tool name the reference derives from a tool
// kind (its class name): CamelCase to snake_case, then a trailing "_tool"
// removed. TerminalTool is "terminal", FileEditorTool "file_editor",
// BrowserToolSet "browser_tool_set". A ToolDefinition does not store the
// name, so readers of a SystemPromptEvent use this.
func NameFromKind(kind string) string {
	s := camelWord.ReplaceAllString(kind, "${1}_${2}")
	s = strings.ToLower(camelUpper.ReplaceAllString(s, "${1}_${2}"))
	return strings.TrimSuffix(s, "_tool")
}
