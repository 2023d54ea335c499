package server

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/gohands/gohands/tools/task"
)

// A start request's agent_definitions are the client's sub-agent
// definitions (the reference's AgentDefinition: the JSON form of the
// Markdown files the task tool reads). As the reference does, each is
// registered for the whole server, unless a definition of its name is
// registered already, so that a conversation's task tool can run it; they
// are kept in meta.json and registered again when a stored conversation
// is loaded.

// decodeAgentDefinitions checks the definitions as the reference's model
// does (a name; positive limits) and returns them as meta.json keeps
// them.
func decodeAgentDefinitions(raw []json.RawMessage) ([]*task.Definition, []json.RawMessage, error) {
	defs := []*task.Definition{}
	stored := []json.RawMessage{}
	for i, r := range raw {
		bad := func(msg string, loc ...any) error {
			return &invalidError{loc: append([]any{"body", "agent_definitions", i}, loc...), typ: "value_error", msg: "agent_definitions: " + msg}
		}
		d := &task.Definition{Model: "inherit", Tools: []string{}, Skills: []string{}, WhenToUseExamples: []string{}, Metadata: map[string]any{}}
		if err := json.Unmarshal(r, d); err != nil {
			return nil, nil, bad(fmt.Sprintf("not an agent definition: %v", err))
		}
		switch {
		case d.Name == "":
			return nil, nil, bad("a definition needs a name", "name")
		case d.MaxIterationPerRun != nil && *d.MaxIterationPerRun <= 0:
			return nil, nil, bad("max_iteration_per_run must be greater than 0", "max_iteration_per_run")
		case d.MaxBudgetPerRun != nil && *d.MaxBudgetPerRun <= 0:
			return nil, nil, bad("max_budget_per_run must be greater than 0", "max_budget_per_run")
		}
		b, err := json.Marshal(d)
		if err != nil {
			return nil, nil, bad(err.Error())
		}
		defs = append(defs, d)
		stored = append(stored, b)
	}
	return defs, stored, nil
}

// registerAgentDefinitions registers defs where their names are free.
func registerAgentDefinitions(defs []*task.Definition, log *slog.Logger) {
	for _, d := range defs {
		if err := task.Register(d); err != nil {
			log.Debug("agent definition not registered", "name", d.Name, "err", err)
		}
	}
}

// registerStoredAgentDefinitions registers the definitions a stored
// conversation's meta.json keeps.
func registerStoredAgentDefinitions(raw []json.RawMessage, log *slog.Logger) {
	defs, _, err := decodeAgentDefinitions(raw)
	if err != nil {
		log.Warn("a stored conversation's agent definitions are unreadable", "err", err)
		return
	}
	registerAgentDefinitions(defs, log)
}
