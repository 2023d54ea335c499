package tool

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gohands/gohands/event"
)

// Call is a model's tool call turned into an action, ready to execute.
type Call struct {
	// Tool is the tool called.
	Tool Tool
	// Name is the tool's name, after alias and malformed-name repair.
	Name string
	// Arguments is the JSON text of the repaired arguments, meta-arguments
	// included, formatted as Python's json.dumps does: what the
	// ActionEvent's tool_call records, as in the reference.
	Arguments string
	// Action is the parsed action.
	Action event.Action
	// SecurityRisk is the risk the model declared (see SplitMeta).
	SecurityRisk event.SecurityRisk
	// Summary is the model's summary of the action, or a generated one.
	Summary string
}

// CallError is a tool call that cannot be executed. Its message is written
// for the model, in the reference's words.
type CallError struct {
	// ToolName is the name to record in the error event.
	ToolName string
	// NotFound is set when no tool of that name exists.
	NotFound bool
	// Unparseable is set when the arguments were not JSON at all; the
	// reference then records them as
	// {"_openhands_malformed_tool_call":true,"error":...}.
	Unparseable bool
	// Err is the underlying problem.
	Err error

	msg string
}

// Error implements error.
func (e *CallError) Error() string { return e.msg }

// Unwrap returns the underlying problem (often *FieldError values).
func (e *CallError) Unwrap() error { return e.Err }

// PrepareCall turns a model's call of the tool name with the JSON argument
// text arguments into an action of one of tools, repairing what models get
// wrong on the way: ParseArguments,
// NormalizeCall, RepairArgs, SplitMeta, then the tool's ParseAction.
// honourRisk is passed to SplitMeta. Every failure is a *CallError.
func PrepareCall(tools []Tool, name, arguments string, honourRisk bool) (*Call, error) {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if !slices.Contains(names, t.Name()) {
			names = append(names, t.Name())
		}
	}
	invalid := func(display string, keys []string, unparseable bool, err error) error {
		params := "Arguments: unparseable JSON"
		if !unparseable {
			params = "Parameters provided: " + pyList(keys)
		}
		return &CallError{ToolName: display, Unparseable: unparseable, Err: err,
			msg: fmt.Sprintf("Error validating tool '%s': %v. %s", display, err, params)}
	}

	args, err := ParseArguments(arguments)
	if err != nil {
		return nil, invalid(name, nil, true, err)
	}
	keys := func(raw json.RawMessage) []string {
		o, _ := parseObject(raw)
		return o.keys()
	}
	t, args2, err := NormalizeCall(tools, name, args)
	if err != nil {
		display := name
		if t != nil {
			display = t.Name() // the tool that could not repair the call
		}
		return nil, invalid(display, keys(args), false, err)
	}
	args = args2
	if t == nil {
		return nil, &CallError{ToolName: name, NotFound: true, Err: fmt.Errorf("tool %q not found", name),
			msg: fmt.Sprintf("Tool '%s' not found. Available: %s", name, pyList(names))}
	}
	toolName := t.Name()
	if args, err = RepairArgs(inputSchema(t), args); err != nil {
		return nil, invalid(name, keys(args), false, err)
	}
	// Written as the reference writes it (Python's json.dumps), so logs
	// of both read alike.
	c := &Call{Tool: t, Name: toolName, Arguments: pyJSON(args)}
	clean, risk, summary, err := SplitMeta(args, t, honourRisk)
	if err != nil {
		return nil, invalid(name, keys(args), false, err)
	}
	c.SecurityRisk, c.Summary = risk, summary
	if c.Action, err = t.ParseAction(clean); err != nil {
		return nil, invalid(name, keys(clean), false, err)
	}
	return c, nil
}
