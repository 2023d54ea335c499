// Package tool defines typed tools: an action type, an observation type and
// an executor. The JSON schema the model sees is derived from the action
// type, arguments are validated against it before the executor runs, and a
// registry turns plain-JSON tool specs into tools.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/gohands/gohands/event"
)

// Tool is a tool as the agent sees it: untyped, so tools of different types
// sit in one list. Tools made by New implement it; so do MCP tools.
type Tool interface {
	// Name is the name the model calls the tool by.
	Name() string
	// Description tells the model what the tool does.
	Description() string
	// Annotations are hints about the tool's behaviour; nil means defaults.
	Annotations() *event.ToolAnnotations
	// Definition is the tool as serialised in a SystemPromptEvent.
	Definition() event.ToolDefinition
	// InputSchema is the JSON schema of the tool's own arguments (without the
	// security_risk and summary meta-arguments), simplified for LLMs.
	InputSchema() map[string]any
	// ParseAction validates the model's arguments (a JSON object, meta
	// arguments already removed) and returns the action. The error, if any,
	// is written for the model: it names the offending field.
	ParseAction(args json.RawMessage) (event.Action, error)
	// Execute runs an action made by ParseAction. Failures the model should
	// see are returned as observations with IsError set; a non-nil error
	// means the tool itself broke.
	Execute(ctx context.Context, action event.Action) (event.Observation, error)
}

// Executor runs one action of type A and returns its observation.
type Executor[A any, O event.Observation] func(ctx context.Context, action *A) (O, error)

// Options configures a tool made by New. A nil *Options is valid.
type Options struct {
	// Annotations are hints about the tool's behaviour.
	Annotations *event.ToolAnnotations
	// Kind is the tool's kind in its definition, e.g. "TerminalTool".
	// The default is the name in CamelCase followed by "Tool".
	Kind string
	// Close, if set, is called by the tool's Close method (executors that
	// hold processes or files release them here).
	Close func() error
}

// Typed is a tool made by New.
type Typed[A any, O event.Observation] struct {
	name, description string
	exec              Executor[A, O]
	opts              Options
	actionKind        string
	observationKind   string
	schema            map[string]any
}

// New returns a tool named name that decodes arguments into an A and runs
// exec. A must be a struct type and both A and the struct type behind O must
// be registered with event.RegisterKind.
func New[A any, O event.Observation](name, description string, exec Executor[A, O], opts *Options) *Typed[A, O] {
	t := &Typed[A, O]{name: name, description: description, exec: exec}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.Kind == "" {
		t.opts.Kind = camel(name) + "Tool"
	}
	var ok bool
	if t.actionKind, ok = event.KindOf(new(A)); !ok {
		panic(fmt.Sprintf("tool.New(%q): action type %v is not a registered kind", name, reflect.TypeFor[A]()))
	}
	ot := reflect.TypeFor[O]()
	if ot.Kind() == reflect.Pointer {
		ot = ot.Elem()
	}
	if t.observationKind, ok = event.KindOf(reflect.New(ot).Interface()); !ok {
		panic(fmt.Sprintf("tool.New(%q): observation type %v is not a registered kind", name, ot))
	}
	t.schema = SchemaFor[A]()
	return t
}

// Name implements Tool.
func (t *Typed[A, O]) Name() string { return t.name }

// Description implements Tool.
func (t *Typed[A, O]) Description() string { return t.description }

// Annotations implements Tool.
func (t *Typed[A, O]) Annotations() *event.ToolAnnotations { return t.opts.Annotations }

// InputSchema implements Tool.
func (t *Typed[A, O]) InputSchema() map[string]any { return t.schema }

// Definition implements Tool.
func (t *Typed[A, O]) Definition() event.ToolDefinition {
	title := t.name
	if a := t.opts.Annotations; a != nil && a.Title != "" {
		title = a.Title
	}
	return event.ToolDefinition{
		Description:     t.description,
		ActionType:      t.actionKind,
		ObservationType: t.observationKind,
		Annotations:     t.opts.Annotations,
		Title:           title,
		Kind:            t.opts.Kind,
	}
}

// ParseAction implements Tool.
func (t *Typed[A, O]) ParseAction(args json.RawMessage) (event.Action, error) {
	a := new(A)
	if err := Validate(t.schema, args); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(args, a); err != nil {
		return nil, fmt.Errorf("invalid arguments for tool %s: %w", t.name, err)
	}
	return a, nil
}

// Execute implements Tool.
func (t *Typed[A, O]) Execute(ctx context.Context, action event.Action) (event.Observation, error) {
	a, ok := action.(*A)
	if !ok {
		return nil, fmt.Errorf("tool %s: action is %T, want %T", t.name, action, a)
	}
	return t.Run(ctx, a)
}

// Run runs the executor on a typed action.
func (t *Typed[A, O]) Run(ctx context.Context, action *A) (O, error) {
	return t.exec(ctx, action)
}

// Close releases what the executor holds.
func (t *Typed[A, O]) Close() error {
	if t.opts.Close != nil {
		return t.opts.Close()
	}
	return nil
}

// camel turns snake_case into CamelCase.
func camel(s string) string {
	out := make([]byte, 0, len(s))
	up := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '-' {
			up = true
			continue
		}
		if up && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}
