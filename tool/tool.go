// Package tool defines typed tools: an action type, an observation type and
// an executor. The JSON schema the model sees is derived from the action
// type, arguments are validated against it before the executor runs, and a
// registry turns plain-JSON tool specs into tools.
//
// A tool author writes two structs and one function and calls [New] (see
// the package example). The schema follows the struct-tag conventions
// described at [SchemaFor].
//
// For the agent loop the package offers:
//   - the model-facing forms of a tool: [ChatCompletionsFormat],
//     [ResponsesFormat], [AnthropicFormat], [MCPFormat], all built on
//     [Parameters], which adds the security_risk and summary
//     meta-arguments;
//   - [PrepareCall], which turns a model's tool call into an action,
//     repairing what models commonly get wrong ([ParseArguments],
//     [NormalizeCall], [RepairArgs]) and removing the meta-arguments
//     ([SplitMeta]), with errors the model can act on;
//   - the registry: [Register], [Resolve], [ResolveAll] and [CloseAll].
//
// Tools that hold resources implement [Closer]; the conversation that owns
// them closes them when it is closed.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

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
	// Meta is free-form metadata kept in the tool's definition and sent as
	// "_meta" in its MCP form.
	Meta map[string]any
	// Aliases are names models call this tool by (see Repairer).
	Aliases []string
	// Repair, if set, is the tool's Repairer.RepairCall: it adapts calls
	// made under its name, its aliases, or names no tool has.
	Repair func(name string, args *Args) (ok bool, err error)
}

// Typed is a tool made by New.
type Typed[A any, O event.Observation] struct {
	name, description string
	exec              Executor[A, O]
	opts              Options
	actionKind        string
	observationKind   string
	schema            map[string]any
	info              *typeInfo
	meta              json.RawMessage
}

// New returns a tool named name that decodes arguments into an A and runs
// exec. A must be a struct type following the tag conventions of SchemaFor,
// and both A and the struct type behind O must be registered with
// event.RegisterKind. New panics otherwise: these are programming errors.
//
// A tool that holds resources (a shell, a browser) releases them in
// Options.Close; the conversation that owns the tool calls Close when it is
// closed.
func New[A any, O event.Observation](name, description string, exec Executor[A, O], opts *Options) *Typed[A, O] {
	t := &Typed[A, O]{name: name, description: description, exec: exec}
	if opts != nil {
		t.opts = *opts
		if a := opts.Annotations; a != nil {
			c := *a // the tool keeps its own
			t.opts.Annotations = &c
		}
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
	d := derive(reflect.TypeFor[A]())
	if d.err != nil {
		panic(fmt.Sprintf("tool.New(%q): action type %v: %v", name, reflect.TypeFor[A](), d.err))
	}
	t.schema, t.info = d.schema, d.info
	if t.opts.Meta != nil {
		var err error
		if t.meta, err = event.MarshalJSON(t.opts.Meta); err != nil {
			panic(fmt.Sprintf("tool.New(%q): Options.Meta: %v", name, err))
		}
	}
	return t
}

// Name implements Tool.
func (t *Typed[A, O]) Name() string { return t.name }

// Description implements Tool.
func (t *Typed[A, O]) Description() string { return t.description }

// Annotations implements Tool. The result is a copy.
func (t *Typed[A, O]) Annotations() *event.ToolAnnotations {
	if t.opts.Annotations == nil {
		return nil
	}
	a := *t.opts.Annotations
	return &a
}

// InputSchema implements Tool. The result is a copy.
func (t *Typed[A, O]) InputSchema() map[string]any { return cloneSchema(t.schema) }

// sharedSchema returns the schema itself, for read-only use in this
// package.
func (t *Typed[A, O]) sharedSchema() map[string]any { return t.schema }

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
		Annotations:     t.Annotations(),
		Meta:            t.meta,
		Title:           title,
		Kind:            t.opts.Kind,
	}
}

// ParseAction implements Tool. It validates args against the schema,
// fills in the defaults of missing fields and decodes the result into an
// *A. Every failure is a *FieldError (or several, joined) written for the
// model; it never panics, whatever args holds.
func (t *Typed[A, O]) ParseAction(args json.RawMessage) (event.Action, error) {
	a, err := t.Parse(args)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Parse is ParseAction with a typed result.
func (t *Typed[A, O]) Parse(args json.RawMessage) (*A, error) {
	v, err := decodeArgs(args)
	if err != nil {
		return nil, err
	}
	if err := validateValue(t.schema, v); err != nil {
		return nil, err
	}
	normalize(t.info, v)
	data, err := json.Marshal(v)
	if err != nil {
		return nil, &FieldError{Msg: fmt.Sprintf("invalid arguments: %v", err)}
	}
	a := new(A)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, &FieldError{Field: te.Field, Msg: fmt.Sprintf("field %q: %s does not fit %v", te.Field, te.Value, te.Type)}
		}
		return nil, &FieldError{Msg: fmt.Sprintf("invalid arguments: %v", err)}
	}
	return a, nil
}

// normalize fills in defaults of missing (or null) fields and turns whole
// floats given for integer fields (3.0) into integers, so that
// encoding/json accepts them.
func normalize(info *typeInfo, v any) any {
	if info == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if info.kind != reflect.Struct {
			return v
		}
		for k, val := range x {
			if val == nil {
				delete(x, k) // null means absent, as in the reference
			}
		}
		for _, f := range info.fields {
			val, ok := x[f.name]
			if !ok && f.def != nil {
				x[f.name] = cloneValue(f.def)
				continue
			}
			if !ok {
				continue
			}
			x[f.name] = normalize(f.child, val)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(info.elem, e)
		}
	case json.Number:
		if info.intish {
			if _, err := x.Int64(); err != nil {
				if f, err := x.Float64(); err == nil {
					return json.Number(strconv.FormatInt(int64(f), 10))
				}
			}
		}
	}
	return v
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
