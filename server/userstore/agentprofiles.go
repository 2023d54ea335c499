package userstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/uuid"
)

// AgentProfiles is the store of agent profiles: named launch
// specifications (an agent kind, the LLM profile it uses by name, its
// tools, condenser, MCP servers and secrets by name) in the reference's
// layout, agent-profiles/NAME.json in the persistence directory. A
// profile holds no secret, so nothing in it is sealed. Each has a stable
// id, which the settings' active_agent_profile_id names, and a revision
// bumped on every save over it.
type AgentProfiles struct {
	p *Profiles
}

// OpenAgentProfiles returns the agent-profile store of the persistence
// directory dir.
func OpenAgentProfiles(dir string) *AgentProfiles {
	return &AgentProfiles{p: &Profiles{dir: filepath.Join(dir, "agent-profiles"), lockName: "agent-profiles.json"}}
}

// AgentProfileSummary is a profile as listed, read without validating it.
type AgentProfileSummary struct {
	ID            any    // the stored id (a string, or whatever the file holds)
	Name          string // the file's name
	AgentKind     string
	Revision      any
	LLMProfileRef any // nil for an ACP profile
	MCPServerRefs any
}

// List returns the summaries of the stored profiles, by name. A file
// that is not a JSON object is left out.
func (a *AgentProfiles) List() ([]AgentProfileSummary, error) {
	var out []AgentProfileSummary
	err := a.p.lock(func() error {
		var err error
		out, err = a.list()
		return err
	})
	return out, err
}

func (a *AgentProfiles) list() ([]AgentProfileSummary, error) {
	names, err := a.p.names()
	if err != nil {
		return nil, err
	}
	var out []AgentProfileSummary
	for _, n := range names {
		b, err := file{dir: a.p.dir, name: n + ".json"}.read()
		var m map[string]any
		if err != nil || b == nil || decode(b, &m) != nil || m == nil {
			continue
		}
		kind, ok := m["agent_kind"].(string)
		if !ok {
			kind = "openhands"
		}
		s := AgentProfileSummary{ID: m["id"], Name: n, AgentKind: kind, Revision: m["revision"], MCPServerRefs: m["mcp_server_refs"]}
		if kind == "openhands" {
			s.LLMProfileRef = m["llm_profile_ref"]
		}
		out = append(out, s)
	}
	return out, nil
}

// NameForID returns the name of the profile whose id is id, "" when
// none has it.
func (a *AgentProfiles) NameForID(id string) (string, error) {
	list, err := a.List()
	if err != nil {
		return "", err
	}
	for _, s := range list {
		if fmt.Sprint(s.ID) == id && s.ID != nil {
			return s.Name, nil
		}
	}
	return "", nil
}

// Load returns the stored profile name: ErrNoProfile when there is none.
func (a *AgentProfiles) Load(name string) (map[string]any, error) {
	return a.p.Load(name)
}

// Save stores profile (a validated profile object, its name aside) as
// name. Over a profile of that name it keeps the stored id and stores
// revision+1; a new profile gets a fresh id and keeps profile's revision.
// Creating one beyond max is ErrProfileLimit. It returns what it stored.
func (a *AgentProfiles) Save(name string, profile map[string]any, max int) (map[string]any, error) {
	name = CanonicalProfileName(name)
	f, err := a.p.file(name)
	if err != nil {
		return nil, err
	}
	out := Clone(profile)
	out["name"] = name
	err = a.p.lock(func() error {
		list, err := a.list()
		if err != nil {
			return err
		}
		out["id"] = uuid.NewString()
		for _, s := range list {
			if s.Name != name {
				continue
			}
			if id, ok := s.ID.(string); ok && uuid.Validate(id) == nil {
				out["id"] = id
				out["revision"] = num(revisionOf(s.Revision) + 1)
			}
		}
		if _, err := os.Stat(f.path()); errors.Is(err, os.ErrNotExist) && max > 0 {
			names, err := a.p.names()
			if err != nil {
				return err
			}
			if len(names) >= max {
				return fmt.Errorf("%w (%d)", ErrProfileLimit, max)
			}
		}
		return f.write(ordered(out, agentProfileOrder))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func revisionOf(v any) int {
	var n int
	if _, err := fmt.Sscan(fmt.Sprint(v), &n); err != nil {
		return 0
	}
	return n
}

// Delete removes a profile; a missing one is no error.
func (a *AgentProfiles) Delete(name string) error { return a.p.Delete(name) }

// Rename renames a profile and the name it holds, keeping its id:
// ErrNoProfile when from is missing, ErrProfileExists when to is taken.
func (a *AgentProfiles) Rename(from, to string) error {
	ff, err := a.p.file(from)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoProfile, err)
	}
	tf, err := a.p.file(to)
	if err != nil {
		return err
	}
	return a.p.lock(func() error {
		b, err := ff.read()
		if err != nil {
			return err
		}
		if b == nil {
			return fmt.Errorf("%w: %q", ErrNoProfile, from)
		}
		if ff.path() == tf.path() {
			return nil
		}
		if _, err := os.Stat(tf.path()); err == nil {
			return fmt.Errorf("%w: %q", ErrProfileExists, to)
		}
		var m map[string]any
		if decode(b, &m) == nil && m != nil {
			m["name"] = trimExt(tf.name)
			if err := tf.write(ordered(m, agentProfileOrder)); err != nil {
				return err
			}
			return os.Remove(ff.path())
		}
		if err := os.Rename(ff.path(), tf.path()); err != nil {
			return fmt.Errorf("userstore: %w", err)
		}
		return nil
	})
}

// agentProfileOrder is the order of the reference's profile members, so
// a file reads as the reference writes it.
var agentProfileOrder = []string{
	"schema_version", "agent_kind", "id", "name", "revision", "mcp_server_refs", "secret_refs",
	"llm_profile_ref", "agent", "tools", "persona", "system_message_suffix", "disabled_skills",
	"public_skills", "condenser", "verification", "enable_classify_and_switch_llm_tool",
	"meta_profile_ref", "tool_concurrency_limit",
	"acp_server", "acp_model", "acp_session_mode", "acp_prompt_timeout", "acp_startup_timeout",
	"acp_command", "acp_args",
}

// orderedDoc encodes a JSON object with the keys of order first, in that
// order, then the others sorted.
type orderedDoc struct {
	m     map[string]any
	order []string
}

func ordered(m map[string]any, order []string) orderedDoc { return orderedDoc{m, order} }

func (o orderedDoc) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(o.m))
	for _, k := range o.order {
		if _, ok := o.m[k]; ok {
			keys = append(keys, k)
		}
	}
	rest := slices.Sorted(maps.Keys(o.m))
	for _, k := range rest {
		if !slices.Contains(o.order, k) {
			keys = append(keys, k)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
