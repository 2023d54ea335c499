package event

import (
	"bytes"
	"errors"
	"fmt"
)

// LargeArgumentBytes is the size from which a tool call's arguments are
// kept once, in the action, rather than twice (see ActionArguments).
const LargeArgumentBytes = 64 << 10

// argumentsInAction stands, in a stored ActionEvent, for tool-call
// arguments that ActionArguments rebuilds from the action. It is valid
// JSON, like the agent's other stand-ins for arguments it does not keep,
// so that a reader that does not know it (the reference) still sends the
// model a well-formed call.
const argumentsInAction = `{"_openhands_arguments_in_action":true}`

// ActionArguments returns the tool-call arguments e's action stands for:
// the action's fields, then the security risk and summary the model gave.
// For a call whose arguments are LargeArgumentBytes or more the agent puts
// these in place of the model's text (the same call, its keys reordered),
// so that CompactArguments can store the event with them once and a
// reader gets back the same bytes.
func ActionArguments(e *ActionEvent) (string, error) {
	if e.Action == nil {
		return "", errors.New("event: an ActionEvent without an action")
	}
	b, err := MarshalKinded(e.Action)
	if err != nil {
		return "", err
	}
	kind, _ := KindOf(e.Action)
	// The encoder writes the kind last; it is the tool's, not the model's.
	tail := `"kind":"` + kind + `"}`
	body, ok := bytes.CutSuffix(b, []byte(tail))
	if !ok || len(body) == 0 || body[0] != '{' {
		return "", fmt.Errorf("event: unexpected encoding of %s", kind)
	}
	body = bytes.TrimSuffix(body, []byte(","))
	add := func(key, val string) {
		q, _ := MarshalJSON(val)
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = append(body, '"')
		body = append(body, key...)
		body = append(body, `":`...)
		body = append(body, q...)
	}
	if e.SecurityRisk != "" && e.SecurityRisk != RiskUnknown {
		add("security_risk", string(e.SecurityRisk))
	}
	if e.Summary != "" {
		add("summary", e.Summary)
	}
	return string(append(body, '}')), nil
}

// CompactArguments returns e, or, for an ActionEvent whose arguments are
// large and are what its action stands for (ActionArguments), a copy that
// keeps them once: decoding it gives back e. Stores call it before
// encoding.
func CompactArguments(e Event) Event {
	a, ok := e.(*ActionEvent)
	if !ok || len(a.ToolCall.Arguments) < LargeArgumentBytes || a.Action == nil {
		return e
	}
	if args, err := ActionArguments(a); err != nil || args != a.ToolCall.Arguments {
		return e
	}
	c := *a
	c.ToolCall.Arguments = argumentsInAction
	return &c
}
