package server

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/tool"
)

// addClientTools checks the start request's client_tools as the reference
// does (each a valid ClientToolSpec, names unique and not those of
// registered tools) and adds each to the agent's tools as the reference
// stores them (named after the tool, the spec in its params), unless the
// agent has it already. It returns the specs as meta.json keeps them.
func addClientTools(ag conversation.Agent, raw []json.RawMessage) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	if len(raw) == 0 {
		return out, nil
	}
	bad := func(i int, msg string) error {
		return &invalidError{loc: []any{"body", "client_tools", i}, typ: "value_error", msg: "client_tools: " + msg}
	}
	a, ok := ag.(*agent.Agent)
	if !ok {
		return nil, bad(0, "only an agent of kind Agent can be given client tools")
	}
	registered := tool.Registered()
	seen := map[string]bool{}
	for i, r := range raw {
		cs, err := tool.ParseClientSpec(r)
		if err != nil {
			return nil, bad(i, err.Error())
		}
		if seen[cs.Name] {
			return nil, bad(i, fmt.Sprintf("duplicate client tool name '%s' in one registration request; client tool names must be unique", cs.Name))
		}
		seen[cs.Name] = true
		if slices.Contains(registered, cs.Name) {
			return nil, bad(i, fmt.Sprintf("client tool name '%s' collides with an existing non-client tool; choose a unique client tool name", cs.Name))
		}
		if _, err := tool.NewClientTool(cs); err != nil {
			return nil, bad(i, err.Error())
		}
		if !slices.ContainsFunc(a.Tools, func(s tool.Spec) bool { return s.Name == cs.Name }) {
			a.Tools = append(a.Tools, cs.Spec())
		}
		b, err := json.Marshal(cs)
		if err != nil {
			return nil, bad(i, err.Error())
		}
		out = append(out, b)
	}
	return out, nil
}
