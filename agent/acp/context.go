package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gohands/gohands/skill"
)

// contextFields are the AgentContext fields an ACP prompt can carry
// (reference: the fields tagged acp_compatible). Anything else is
// rejected, so a setting never silently does nothing.
var contextFields = []string{
	"skills", "system_message_suffix", "user_message_suffix", "load_user_skills",
	"load_public_skills", "marketplace_path", "registered_marketplaces",
	"load_project_skills", "load_memory", "memory_context", "disabled_skills",
	"secrets", "current_datetime",
}

// parseContext decodes agent_context, or returns nil when it is unset.
func parseContext(raw json.RawMessage) (*skill.AgentContext, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("agent_context: %w", err)
	}
	var bad []string
	for k := range fields {
		if !slices.Contains(contextFields, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("agent_context: field(s) %s cannot be passed to an ACP server", strings.Join(bad, ", "))
	}
	var ac skill.AgentContext
	if err := json.Unmarshal(raw, &ac); err != nil {
		return nil, fmt.Errorf("agent_context: %w", err)
	}
	return &ac, nil
}
