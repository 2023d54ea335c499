package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/skill"
)

// A start request's agent_launch_additions is the reference 1.58's
// AgentLaunchAdditions: deployment context added to the agent after it is
// resolved, whatever its source (agent, agent_settings or
// agent_profile_id); the stored agent profile is not changed. The
// additions themselves are not stored (meta.json's agent_launch_additions
// stays null, as the reference's); the launched agent holds them.
//
//   - system_message_suffix_append (at most 32768 characters) is appended
//     to the agent's system_message_suffix after a blank line;
//   - skills are merged into the agent's skills by name: a skill the agent
//     already has wins, and one its disabled_skills names stays out. An
//     ACP agent gets none: its server reads its own skills, as the
//     reference's default (native) skill sourcing has it;
//   - llm_profile_ref launches an OpenHands agent profile on that LLM
//     profile instead of its own (recorded in
//     launched_agent_profile.llm_profile_ref). Without agent_profile_id it
//     is a 422; with an ACP profile 422 invalid_agent_launch; naming no
//     LLM profile 422 unresolved_profile_references.
//
// The OpenAI-compatible gateway launches through the same path.

// maxSuffixAppend is the reference's limit on system_message_suffix_append.
const maxSuffixAppend = 32768

// launchAdditions is a start request's agent_launch_additions.
type launchAdditions struct {
	// SystemSuffix is appended to the agent's system message suffix.
	SystemSuffix string `json:"system_message_suffix_append,omitempty"`
	// Skills are merged into the agent's skills (its own win).
	Skills []skill.Skill `json:"skills,omitempty"`
	// LLMProfileRef is the LLM profile to launch with instead of the
	// agent profile's own ("": its own; an openhands profile only).
	LLMProfileRef string `json:"llm_profile_ref,omitempty"`
}

// decodeLaunchAdditions reads agent_launch_additions (nil when absent or
// null), checked as the reference's model checks it; hasProfile tells
// whether the request launches an agent profile.
func decodeLaunchAdditions(raw json.RawMessage, hasProfile bool) (*launchAdditions, error) {
	if isNull(raw) {
		return nil, nil
	}
	loc := func(l ...any) []any { return append([]any{"body", "agent_launch_additions"}, l...) }
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, &invalidError{loc: loc(), typ: "model_type", msg: "Input should be a valid dictionary or object to extract fields from"}
	}
	str := func(name string) (string, bool, error) {
		v, ok := fields[name]
		if !ok || isNull(v) {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, &invalidError{loc: loc(name), typ: "string_type", msg: "Input should be a valid string"}
		}
		return s, true, nil
	}
	add := &launchAdditions{}
	for name, v := range fields {
		switch name {
		case "system_message_suffix_append":
			s, _, err := str(name)
			if err != nil {
				return nil, err
			}
			if utf8.RuneCountInString(s) > maxSuffixAppend {
				return nil, &invalidError{loc: loc(name), typ: "string_too_long", msg: fmt.Sprintf("String should have at most %d characters", maxSuffixAppend)}
			}
			add.SystemSuffix = s
		case "llm_profile_ref":
			s, set, err := str(name)
			if err != nil {
				return nil, err
			}
			if set && s == "" {
				return nil, &invalidError{loc: loc(name), typ: "string_too_short", msg: "String should have at least 1 character"}
			}
			add.LLMProfileRef = s
		case "skills":
			if isNull(v) {
				continue
			}
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, &invalidError{loc: loc(name), typ: "list_type", msg: "Input should be a valid list"}
			}
			for i, r := range list {
				var sk skill.Skill
				if err := json.Unmarshal(r, &sk); err != nil {
					return nil, &invalidError{loc: loc(name, i), typ: "value_error", msg: err.Error()}
				}
				if sk.Name == "" || sk.Content == "" && !bytes.Contains(r, []byte(`"content"`)) {
					return nil, &invalidError{loc: loc(name, i), typ: "missing", msg: "Field required: a skill has a name and content"}
				}
				sk.Normalize()
				add.Skills = append(add.Skills, sk)
			}
		default:
			return nil, &invalidError{loc: loc(name), typ: "extra_forbidden", msg: "Extra inputs are not permitted"}
		}
	}
	if add.LLMProfileRef != "" && !hasProfile {
		return nil, invalid("`agent_launch_additions.llm_profile_ref` requires `agent_profile_id`", "body")
	}
	return add, nil
}

// withLaunchAdditions returns ag with add's suffix and skills in its agent
// context (add nil: ag itself).
func withLaunchAdditions(ag conversation.Agent, add *launchAdditions) (conversation.Agent, error) {
	if add == nil {
		return ag, nil
	}
	suffix := strings.TrimSpace(add.SystemSuffix)
	var ctx *json.RawMessage
	skills := add.Skills
	switch a := ag.(type) {
	case *agent.Agent:
		ctx = &a.AgentContext
	case *acp.Agent:
		ctx, skills = &a.AgentContext, nil
	}
	if ctx == nil || suffix == "" && len(skills) == 0 {
		return ag, nil
	}
	var c skill.AgentContext
	if !isNull(*ctx) {
		if err := json.Unmarshal(*ctx, &c); err != nil {
			return nil, invalid(fmt.Sprintf("agent_context: %v", err), "body", "agent", "agent_context")
		}
	}
	if suffix != "" {
		if prev := strings.TrimSpace(c.SystemMessageSuffix); prev != "" {
			suffix = prev + "\n\n" + suffix
		}
		c.SystemMessageSuffix = suffix
	}
	taken := map[string]bool{}
	for _, s := range c.Skills {
		taken[s.Name] = true
	}
	for _, n := range c.DisabledSkills {
		taken[n] = true
	}
	for _, s := range skills {
		if !taken[s.Name] {
			c.Skills = append(c.Skills, s)
			taken[s.Name] = true
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	*ctx = raw
	return ag, nil
}
