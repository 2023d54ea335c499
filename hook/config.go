// Package hook runs user-configured hooks at points of an agent's run:
// before and after a tool call, when the user submits a prompt, when the
// agent wants to stop, and when a session starts or ends. It reads the
// reference's hooks.json format (also Claude Code's).
//
// A command hook is a shell command run in the working directory with the
// hook input as JSON on stdin. Exit 0 means success (stdout may hold a JSON
// decision), exit 2 blocks the operation, any other exit status is a
// failure that does not block. A hook that runs past its timeout is killed
// with its whole process group and reported as a failure; hooks never hang
// their caller. Prompt hooks ask an LLM, agent hooks a sub-agent (that the
// caller runs: Runner.SubAgent), for a JSON decision and allow when the
// answer is unusable ("fall open").
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/gohands/gohands/event"
)

// Event types, as the reference names them.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	SessionStart     = "SessionStart"
	SessionEnd       = "SessionEnd"
	Stop             = "Stop"
)

// Type is how a hook runs.
type Type string

// Hook types.
const (
	TypeCommand Type = "command" // a shell command
	TypePrompt  Type = "prompt"  // one LLM completion
	TypeAgent   Type = "agent"   // a sub-agent (Runner.SubAgent)
)

// Defaults of Definition (the reference's).
const (
	DefaultTimeout       = 60 // seconds
	DefaultMaxIterations = 3
)

// Definition is one hook (the reference's HookDefinition).
type Definition struct {
	Type    Type   `json:"type"`
	Name    string `json:"name,omitempty"`
	Command string `json:"command"`
	// Prompt is a prompt hook's policy.
	Prompt string `json:"prompt,omitempty"`
	// SystemPrompt and Tools configure an agent hook.
	SystemPrompt string             `json:"system_prompt,omitempty"`
	Tools        event.List[string] `json:"tools"`
	// Timeout is the time limit in seconds.
	Timeout       int `json:"timeout"`
	MaxIterations int `json:"max_iterations"`
	// Async runs a command hook in the background; it cannot block.
	Async bool `json:"async"`
}

// UnmarshalJSON implements json.Unmarshaler: absent keys get the
// reference's defaults, "async_" is accepted for "async", and the fields
// are checked against the type.
func (d *Definition) UnmarshalJSON(data []byte) error {
	type plain Definition
	aux := struct {
		*plain
		Async2 *bool `json:"async_"`
	}{plain: (*plain)(&Definition{Type: TypeCommand, Timeout: DefaultTimeout, MaxIterations: DefaultMaxIterations})}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&aux); err != nil {
		return fmt.Errorf("hook definition: %w", err)
	}
	v := Definition(*aux.plain)
	if aux.Async2 != nil {
		v.Async = *aux.Async2
	}
	if v.Tools == nil {
		v.Tools = event.List[string]{}
	}
	if err := v.Validate(); err != nil {
		return err
	}
	*d = v
	return nil
}

// Validate checks that the fields fit the hook's type.
func (d *Definition) Validate() error {
	switch d.Type {
	case TypeCommand:
		if d.Command == "" {
			return errors.New("hook: 'command' is required when type is 'command'")
		}
	case TypePrompt:
		switch {
		case d.Prompt == "":
			return errors.New("hook: 'prompt' is required when type is 'prompt'")
		case d.Command != "":
			return errors.New("hook: 'command' must not be set when type is 'prompt'")
		case d.Async:
			return errors.New("hook: 'async' is not supported for prompt hooks")
		}
	case TypeAgent:
		switch {
		case d.Command != "":
			return errors.New("hook: 'command' must not be set when type is 'agent'; use 'system_prompt'")
		case d.Async:
			return errors.New("hook: 'async' is not supported for agent hooks")
		}
	default:
		return fmt.Errorf("hook: unknown type %q (want command, prompt or agent)", d.Type)
	}
	if d.Timeout <= 0 {
		return fmt.Errorf("hook: timeout %d: must be positive", d.Timeout)
	}
	return nil
}

// Label names the hook in logs and events: its command, or its type and
// name (or the start of its prompt).
func (d *Definition) Label() string {
	if d.Command != "" {
		return d.Command
	}
	prefix := string(d.Type) + "-hook"
	switch {
	case d.Name != "":
		return prefix + ":" + d.Name
	case d.Type == TypePrompt && d.Prompt != "":
		return prefix + ":" + cut(d.Prompt, 20)
	case d.Type == TypeAgent && d.SystemPrompt != "":
		return prefix + ":" + cut(d.SystemPrompt, 20)
	}
	return prefix + ":" + string(d.Type)
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// Matcher selects hooks by tool name.
type Matcher struct {
	// Matcher is "*" or "" for every tool (and events without a tool),
	// "/re/" for a regular expression matching the whole name, a string
	// with regular expression metacharacters for the same, or else an
	// exact tool name.
	Matcher string       `json:"matcher"`
	Hooks   []Definition `json:"hooks"`
}

// UnmarshalJSON implements json.Unmarshaler (matcher defaults to "*").
func (m *Matcher) UnmarshalJSON(data []byte) error {
	type plain Matcher
	v := plain{Matcher: "*"}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Hooks == nil {
		v.Hooks = []Definition{}
	}
	*m = Matcher(v)
	return nil
}

const regexMeta = `|.*+?[]()^$\`

// Matches reports whether the matcher selects toolName ("" for events
// without a tool, which only "*" and "" select). An invalid expression
// matches nothing, or (without slashes) falls back to an exact match.
func (m *Matcher) Matches(toolName string) bool {
	p := m.Matcher
	if p == "*" || p == "" {
		return true
	}
	if toolName == "" {
		return false
	}
	if len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
		re, err := regexp.Compile(`^(?:` + p[1:len(p)-1] + `)$`)
		return err == nil && re.MatchString(toolName)
	}
	if strings.ContainsAny(p, regexMeta) {
		if re, err := regexp.Compile(`^(?:` + p + `)$`); err == nil {
			return re.MatchString(toolName)
		}
	}
	return p == toolName
}

// Config is the hooks of each event type (the reference's HookConfig).
type Config struct {
	PreToolUse       []Matcher `json:"pre_tool_use"`
	PostToolUse      []Matcher `json:"post_tool_use"`
	UserPromptSubmit []Matcher `json:"user_prompt_submit"`
	SessionStart     []Matcher `json:"session_start"`
	SessionEnd       []Matcher `json:"session_end"`
	Stop             []Matcher `json:"stop"`
}

// eventFields maps snake_case keys to the event types.
var eventFields = map[string]string{
	"pre_tool_use": PreToolUse, "post_tool_use": PostToolUse, "user_prompt_submit": UserPromptSubmit,
	"session_start": SessionStart, "session_end": SessionEnd, "stop": Stop,
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// UnmarshalJSON implements json.Unmarshaler. It accepts snake_case and
// PascalCase event keys and the {"hooks": {...}} wrapper, and rejects
// unknown and duplicate event keys.
func (c *Config) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("hook config: %w", err)
	}
	if inner, ok := top["hooks"]; ok {
		// Other top-level keys are ignored, as in the reference.
		top = nil
		if err := json.Unmarshal(inner, &top); err != nil {
			return fmt.Errorf("hook config: hooks: %w", err)
		}
	}
	var v Config
	seen := map[string]string{}
	for key, raw := range top {
		s := snake(key)
		typ, ok := eventFields[s]
		if !ok {
			return fmt.Errorf("hook config: unknown event type %q (valid: PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, SessionEnd, Stop)", key)
		}
		if prev, dup := seen[s]; dup {
			return fmt.Errorf("hook config: event %q given twice (%q and %q)", typ, prev, key)
		}
		seen[s] = key
		var ms []Matcher
		if err := json.Unmarshal(raw, &ms); err != nil {
			return fmt.Errorf("hook config: %s: %w", key, err)
		}
		*v.matchers(typ) = ms
	}
	*c = v
	return nil
}

// MarshalJSON implements json.Marshaler with snake_case keys, empty lists
// as [].
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	v := plain(c)
	for _, p := range []*[]Matcher{&v.PreToolUse, &v.PostToolUse, &v.UserPromptSubmit, &v.SessionStart, &v.SessionEnd, &v.Stop} {
		if *p == nil {
			*p = []Matcher{}
		}
	}
	return json.Marshal(v)
}

func (c *Config) matchers(eventType string) *[]Matcher {
	switch eventType {
	case PreToolUse:
		return &c.PreToolUse
	case PostToolUse:
		return &c.PostToolUse
	case UserPromptSubmit:
		return &c.UserPromptSubmit
	case SessionStart:
		return &c.SessionStart
	case SessionEnd:
		return &c.SessionEnd
	case Stop:
		return &c.Stop
	}
	return nil
}

// Hooks returns the hooks of eventType whose matcher selects toolName, in
// the order of the config.
func (c *Config) Hooks(eventType, toolName string) []Definition {
	if c == nil {
		return nil
	}
	ms := c.matchers(eventType)
	if ms == nil {
		return nil
	}
	var out []Definition
	for i := range *ms {
		if (*ms)[i].Matches(toolName) {
			out = append(out, (*ms)[i].Hooks...)
		}
	}
	return out
}

// IsEmpty reports whether no event has a matcher.
func (c *Config) IsEmpty() bool {
	return c == nil || len(c.PreToolUse)+len(c.PostToolUse)+len(c.UserPromptSubmit)+len(c.SessionStart)+len(c.SessionEnd)+len(c.Stop) == 0
}

// Parse reads a hooks.json document.
func Parse(data []byte) (*Config, error) {
	c := new(Config)
	if err := json.Unmarshal(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// ConfigFile is where hooks are configured, relative to a project or home
// directory.
const ConfigFile = ".openhands/hooks.json"

// Load reads the hooks of a project: workDir's .openhands/hooks.json, or if
// there is none the user's ~/.openhands/hooks.json. It returns the path it
// read ("" and an empty config when neither exists). A file that exists but
// is invalid is an error naming it.
func Load(workDir string) (*Config, string, error) {
	paths := []string{filepath.Join(workDir, ConfigFile)}
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ConfigFile))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("hook: %w", err)
		}
		c, err := Parse(data)
		if err != nil {
			return nil, "", fmt.Errorf("hook: %s: %w", p, err)
		}
		return c, p, nil
	}
	return &Config{}, "", nil
}
