// Package skill holds skills and the agent context: knowledge loaded from
// a repository's instruction files and skill folders, put into the system
// prompt (always-on skills) or into a user message when one of its keywords
// appears (triggered skills).
//
// The JSON forms of Skill and AgentContext are the Python reference's.
package skill

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gohands/gohands/event"
)

// Trigger types.
const (
	TriggerKeyword = "keyword"
	TriggerTask    = "task"
	TriggerPath    = "path"
)

// Trigger says when a skill's content is injected. A nil *Trigger means the
// skill is always on.
type Trigger struct {
	// Type is TriggerKeyword, TriggerTask or TriggerPath.
	Type string
	// Words are the keywords (keyword triggers) or the triggers (task
	// triggers).
	Words []string
	// Paths are gitignore-style globs (path triggers).
	Paths []string
}

// MarshalJSON writes the reference's form, e.g.
// {"type":"keyword","keywords":["git"]}.
func (t Trigger) MarshalJSON() ([]byte, error) {
	list := t.Words
	key := "keywords"
	switch t.Type {
	case TriggerKeyword:
	case TriggerTask:
		key = "triggers"
	case TriggerPath:
		key, list = "paths", t.Paths
	default:
		return nil, fmt.Errorf("skill: unknown trigger type %q", t.Type)
	}
	if list == nil {
		list = []string{}
	}
	l, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	// "type" first, as the reference writes it.
	return fmt.Appendf(nil, `{"type":%q,%q:%s}`, t.Type, key, l), nil
}

// UnmarshalJSON reads the reference's form; the list a type needs must be
// present.
func (t *Trigger) UnmarshalJSON(data []byte) error {
	var m struct {
		Type     string    `json:"type"`
		Keywords *[]string `json:"keywords"`
		Triggers *[]string `json:"triggers"`
		Paths    *[]string `json:"paths"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	var list *[]string
	switch m.Type {
	case TriggerKeyword:
		list = m.Keywords
	case TriggerTask:
		list = m.Triggers
	case TriggerPath:
		list = m.Paths
	default:
		return fmt.Errorf("skill: unknown trigger type %q", m.Type)
	}
	if list == nil {
		return fmt.Errorf("skill: %s trigger without its list", m.Type)
	}
	*t = Trigger{Type: m.Type}
	if m.Type == TriggerPath {
		t.Paths = *list
	} else {
		t.Words = *list
	}
	return nil
}

// Input is a variable a task skill asks the user for.
type Input struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Resources lists the files of an AgentSkills skill directory.
type Resources struct {
	SkillRoot  string   `json:"skill_root"`
	Scripts    []string `json:"scripts"`
	References []string `json:"references"`
	Assets     []string `json:"assets"`
}

// DefaultVersion is the version of a skill that states none.
const DefaultVersion = "1.0.0"

// MaxDescription is the longest description kept; longer ones are cut.
const MaxDescription = 1024

// Skill is one piece of knowledge for the agent. Its JSON form is the
// reference's: every key written, null where a string is empty.
type Skill struct {
	Name    string `json:"name" required:"true"`
	Content string `json:"content" required:"true"`
	// Trigger is nil for always-on skills.
	Trigger *Trigger `json:"trigger"`
	// Source is the file the skill came from; "" for skills made in code.
	Source string `json:"source" wire:"nullempty"`
	// MCPTools is the skill's MCP server configuration, kept as JSON.
	MCPTools            json.RawMessage `json:"mcp_tools" wire:"nullempty"`
	Inputs              []Input         `json:"inputs" wire:"emitempty"`
	IsAgentSkillsFormat bool            `json:"is_agentskills_format"`
	// Version is DefaultVersion when empty.
	Version       string            `json:"version"`
	Description   string            `json:"description" wire:"nullempty"`
	License       string            `json:"license" wire:"nullempty"`
	Compatibility string            `json:"compatibility" wire:"nullempty"`
	Metadata      map[string]string `json:"metadata"`
	// AllowedTools is nil when the skill does not restrict tools.
	AllowedTools           []string   `json:"allowed_tools"`
	DisableModelInvocation bool       `json:"disable_model_invocation"`
	Resources              *Resources `json:"resources"`
}

// MarshalJSON writes the reference's form, with DefaultVersion for an
// empty version.
func (s Skill) MarshalJSON() ([]byte, error) {
	type plain Skill // the same fields, without these methods
	p := plain(s)
	if p.Version == "" {
		p.Version = DefaultVersion
	}
	return event.MarshalJSON(p)
}

// UnmarshalJSON reads the reference's form. name and content are required;
// an empty version is DefaultVersion, and path rules are never
// model-invocable.
func (s *Skill) UnmarshalJSON(data []byte) error {
	type plain Skill
	var p plain
	if err := event.UnmarshalJSON(data, &p); err != nil {
		return fmt.Errorf("skill: %w", err)
	}
	*s = Skill(p)
	if s.Version == "" {
		s.Version = DefaultVersion
	}
	if s.Trigger != nil && s.Trigger.Type == TriggerPath {
		s.DisableModelInvocation = true
	}
	return nil
}

// Normalize applies the rules the reference enforces when a skill is made:
// the default version, path rules are never model-invocable, descriptions
// longer than MaxDescription are cut, and task skills with inputs or
// ${variables} end with a request to ask the user for missing values. The
// loaders call it; call it for skills built in code. Decoding JSON does
// not, since stored skills were normalised when made.
func (s *Skill) Normalize() {
	if s.Version == "" {
		s.Version = DefaultVersion
	}
	if s.Trigger != nil && s.Trigger.Type == TriggerPath {
		s.DisableModelInvocation = true
	}
	if r := []rune(s.Description); len(r) > MaxDescription {
		where := "its source"
		if s.Source != "" {
			where = s.Source
		}
		s.Description = string(r[:MaxDescription]) + fmt.Sprintf(" [description cut; the whole skill is in %s]", where)
	}
	if s.Trigger != nil && s.Trigger.Type == TriggerTask && (len(s.Inputs) > 0 || taskVariable.MatchString(s.Content)) {
		if s.Content != "" && !strings.HasSuffix(s.Content, askForInputs) {
			s.Content += askForInputs
		}
	}
}

var taskVariable = regexp.MustCompile(`\$\{[a-zA-Z_][a-zA-Z0-9_]*\}`)

// askForInputs is appended to task skills that need values from the user.
const askForInputs = "\n\nBefore starting, ask the user for any of these values they have not given."

// Keywords returns the words that trigger the skill (keyword and task
// triggers), or nil.
func (s *Skill) Keywords() []string {
	if s.Trigger == nil || s.Trigger.Type == TriggerPath {
		return nil
	}
	return s.Trigger.Words
}

// AlwaysOn reports whether the skill's content belongs in the system
// prompt: a skill without a trigger that is not in the AgentSkills format
// (those are listed by name and read on demand instead).
func (s *Skill) AlwaysOn() bool {
	return s.Trigger == nil && !s.IsAgentSkillsFormat
}

// AgentContext is what an agent knows beyond its tools: skills and prompt
// additions. It is stored on the agent as "agent_context".
type AgentContext struct {
	Skills              []Skill `json:"skills" wire:"emitempty"`
	SystemMessageSuffix string  `json:"system_message_suffix" wire:"nullempty"`
	UserMessageSuffix   string  `json:"user_message_suffix" wire:"nullempty"`
	LoadUserSkills      bool    `json:"load_user_skills"`
	LoadPublicSkills    bool    `json:"load_public_skills"`
	// MarketplacePath is DefaultMarketplacePath when empty.
	MarketplacePath        string            `json:"marketplace_path"`
	RegisteredMarketplaces []json.RawMessage `json:"registered_marketplaces" wire:"emitempty"`
	LoadProjectSkills      bool              `json:"load_project_skills"`
	LoadMemory             bool              `json:"load_memory"`
	DisabledSkills         []string          `json:"disabled_skills" wire:"emitempty"`
	// Secrets are kept as the JSON the reference wrote (strings or secret
	// sources); the secret package interprets them.
	Secrets map[string]json.RawMessage `json:"secrets"`
	// CurrentDatetime is the date and time shown to the model, as text
	// ("2026-01-02T03:04"); "" shows the time the prompt is built, unless
	// NoDatetime.
	CurrentDatetime string `json:"current_datetime,omitempty"`
	// NoDatetime shows no date and time: current_datetime null in JSON, as
	// the reference writes it for an ACP agent. The reference's absent
	// current_datetime means now; so does gohands' (see MarshalJSON).
	NoDatetime bool `json:"-"`
	// MemoryContext is the memory text read at start when LoadMemory is
	// set (see LoadMemory); like the reference's memory_context it is
	// never serialised, since it is re-read from disk.
	MemoryContext string `json:"-"`
	// PublicSkills are the public skills fetched for LoadPublicSkills
	// (package plugin fetches them); LoadSkills adds them below the
	// user's. Never serialised.
	PublicSkills []Skill `json:"-"`
}

// DefaultMarketplacePath is the reference's default marketplace file.
const DefaultMarketplacePath = "marketplaces/default.json"

// MarshalJSON writes the reference's form, with DefaultMarketplacePath for
// an empty marketplace path. current_datetime is null with NoDatetime,
// the text when set, and left out for now: the reference writes the time
// it made the context, which it reads as that time, and reads an absent
// one as now.
func (c AgentContext) MarshalJSON() ([]byte, error) {
	type plain AgentContext // the same fields, without these methods
	p := struct {
		plain
		CurrentDatetime any `json:"current_datetime,omitempty"` // shadows plain's
	}{plain: plain(c)}
	if p.MarketplacePath == "" {
		p.MarketplacePath = DefaultMarketplacePath
	}
	switch {
	case c.NoDatetime:
		p.CurrentDatetime = json.RawMessage("null")
	case c.CurrentDatetime != "":
		p.CurrentDatetime = c.CurrentDatetime
	}
	return event.MarshalJSON(p)
}

// UnmarshalJSON reads the reference's form. A memory_context in it is
// ignored: memory is read from disk. Duplicate skill names are an error, as in
// the reference.
func (c *AgentContext) UnmarshalJSON(data []byte) error {
	type plain AgentContext
	var p plain
	if err := event.UnmarshalJSON(data, &p); err != nil {
		return fmt.Errorf("agent_context: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range p.Skills {
		if seen[s.Name] {
			return fmt.Errorf("skill: duplicate skill name %q in agent_context", s.Name)
		}
		seen[s.Name] = true
	}
	*c = AgentContext(p)
	if p.CurrentDatetime == "" {
		var probe struct {
			CurrentDatetime json.RawMessage `json:"current_datetime"`
		}
		if err := json.Unmarshal(data, &probe); err == nil && string(probe.CurrentDatetime) == "null" {
			c.NoDatetime = true
		}
	}
	return nil
}
