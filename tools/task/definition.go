package task

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// Definition describes a kind of sub-agent, as the reference's
// AgentDefinition: a Markdown file whose YAML front matter names it and
// lists its tools, and whose body is added to the sub-agent's system
// prompt.
//
//	---
//	name: test-runner
//	description: Runs the test suite and reports failures.
//	tools: [terminal]
//	max_iteration_per_run: 30
//	---
//	You run tests and report only what failed, and why.
type Definition struct {
	// Name is the subagent_type the model asks for (the file's name
	// without .md when the front matter has none).
	Name string `json:"name"`
	// Description tells the parent model when to use this sub-agent.
	Description string `json:"description"`
	// Model is "inherit" (the parent's model) or the name of an LLM
	// profile, which gohands does not support yet.
	Model string `json:"model"`
	// Color is a display hint.
	Color *string `json:"color"`
	// Tools are registry names of the sub-agent's tools.
	Tools []string `json:"tools"`
	// Skills are names of skills (from the project's or the user's skill
	// folders) the sub-agent gets.
	Skills []string `json:"skills"`
	// SystemPrompt is the Markdown body, added to the system prompt.
	SystemPrompt string `json:"system_prompt"`
	// Source is the file the definition was read from.
	Source *string `json:"source"`
	// Level is where it was found: project, user, builtin or
	// programmatic.
	Level *string `json:"level"`
	// WhenToUseExamples are the <example> blocks of the description.
	WhenToUseExamples []string `json:"when_to_use_examples"`
	// Hooks is a hook configuration (package hook) for the sub-agent.
	Hooks json.RawMessage `json:"hooks"`
	// PermissionMode is always_confirm, never_confirm or confirm_risky;
	// empty inherits the parent's confirmation policy.
	PermissionMode *string `json:"permission_mode"`
	// MaxIterationPerRun bounds the sub-agent's steps (0: the parent's).
	MaxIterationPerRun *int `json:"max_iteration_per_run"`
	// MaxBudgetPerRun bounds the sub-agent's cost in USD per run (0: none).
	MaxBudgetPerRun *float64 `json:"max_budget_per_run"`
	// MCPConfig are MCP servers for the sub-agent, by name.
	MCPConfig map[string]json.RawMessage `json:"mcp_config"`
	// ProfileStoreDir is where LLM profiles are looked up.
	ProfileStoreDir *string `json:"profile_store_dir"`
	// Condenser is a kind-tagged condenser configuration; empty means the
	// default summarizing condenser, {"kind":"NoOpCondenser"} none.
	Condenser json.RawMessage `json:"condenser"`
	// Metadata holds the front matter keys not listed above.
	Metadata map[string]any `json:"metadata"`
}

// Permission modes of a definition.
const (
	AlwaysConfirm = "always_confirm"
	NeverConfirm  = "never_confirm"
	ConfirmRisky  = "confirm_risky"
)

// Levels of a definition, by where it was found.
const (
	LevelProject      = "project"
	LevelUser         = "user"
	LevelBuiltin      = "builtin"
	LevelPlugin       = "plugin"
	LevelProgrammatic = "programmatic"
)

var knownFields = []string{"name", "description", "model", "color", "tools", "skills",
	"max_iteration_per_run", "max_budget_per_run", "hooks", "profile_store_dir",
	"mcp_config", "mcp_servers", "permission_mode", "condenser"}

var exampleTag = regexp.MustCompile(`(?is)<example>(.*?)</example>`)

// ParseDefinition reads a definition from the Markdown file at path
// (used for the default name and Source).
func ParseDefinition(path string, data []byte) (*Definition, error) {
	metaText, body, _ := skill.SplitFrontmatter(data)
	fm := map[string]any{}
	if len(metaText) > 0 {
		if err := yaml.Unmarshal(metaText, &fm); err != nil {
			return nil, fmt.Errorf("%s: front matter: %w", path, err)
		}
		if fm == nil {
			fm = map[string]any{}
		}
	}
	d := &Definition{
		Name:         strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		Model:        "inherit",
		SystemPrompt: strings.TrimSpace(string(body)),
		Tools:        []string{},
		Skills:       []string{},
		// The reference writes [] when there are none.
		WhenToUseExamples: []string{},
		Metadata:          map[string]any{},
	}
	if path != "" {
		d.Source = &path
	}
	fail := func(format string, args ...any) (*Definition, error) {
		return nil, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if v, ok := fm["name"]; ok && v != nil {
		d.Name = fmt.Sprint(v)
	}
	if v, ok := fm["description"]; ok && v != nil {
		d.Description = fmt.Sprint(v)
	}
	if v, ok := fm["model"]; ok && v != nil {
		d.Model = fmt.Sprint(v)
	}
	if v, ok := fm["color"]; ok && v != nil {
		d.Color = new(fmt.Sprint(v))
	}
	switch v := fm["tools"].(type) {
	case string:
		d.Tools = []string{v}
	case []any:
		for _, t := range v {
			d.Tools = append(d.Tools, fmt.Sprint(t))
		}
	}
	switch v := fm["skills"].(type) {
	case string:
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				d.Skills = append(d.Skills, s)
			}
		}
	case []any:
		for _, s := range v {
			d.Skills = append(d.Skills, fmt.Sprint(s))
		}
	}
	if v, ok := fm["permission_mode"]; ok && v != nil {
		m := strings.ToLower(strings.TrimSpace(fmt.Sprint(v)))
		if !slices.Contains([]string{AlwaysConfirm, NeverConfirm, ConfirmRisky}, m) {
			return fail("invalid permission_mode %q: must be one of always_confirm, confirm_risky, never_confirm", v)
		}
		d.PermissionMode = &m
	}
	if v, ok := fm["max_iteration_per_run"]; ok && v != nil {
		n, err := toInt(v)
		if err != nil || n <= 0 {
			return fail("max_iteration_per_run %v: must be a positive integer", v)
		}
		d.MaxIterationPerRun = &n
	}
	if v, ok := fm["max_budget_per_run"]; ok && v != nil {
		f, err := toFloat(v)
		if err != nil || f <= 0 {
			return fail("max_budget_per_run %v: must be a positive number", v)
		}
		d.MaxBudgetPerRun = &f
	}
	mcpRaw, ok := fm["mcp_config"]
	if !ok || mcpRaw == nil {
		mcpRaw = fm["mcp_servers"]
	}
	if mcpRaw != nil {
		m, ok := mcpRaw.(map[string]any)
		if !ok {
			return fail("mcp_config must be a mapping of server names to configs")
		}
		d.MCPConfig = map[string]json.RawMessage{}
		for k, v := range m {
			b, err := json.Marshal(v)
			if err != nil {
				return fail("mcp_config %q: %v", k, err)
			}
			d.MCPConfig[k] = b
		}
	}
	if v, ok := fm["hooks"].(map[string]any); ok {
		b, err := json.Marshal(v)
		if err != nil {
			return fail("hooks: %v", err)
		}
		d.Hooks = b
	}
	if v, ok := fm["profile_store_dir"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return fail("profile_store_dir must be text")
		}
		d.ProfileStoreDir = &s
	}
	switch v := fm["condenser"].(type) {
	case nil:
	case bool:
		if !v {
			d.Condenser = json.RawMessage(`{"kind":"NoOpCondenser"}`)
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "default", "inherit":
		case "none", "off", "false", "no", "disable", "disabled":
			d.Condenser = json.RawMessage(`{"kind":"NoOpCondenser"}`)
		default:
			return fail("invalid condenser %q: use default, none, or a mapping with a condenser config", v)
		}
	case map[string]any:
		b, err := json.Marshal(v)
		if err != nil {
			return fail("condenser: %v", err)
		}
		d.Condenser = b
	default:
		return fail("invalid condenser %v", v)
	}
	for _, m := range exampleTag.FindAllStringSubmatch(d.Description, -1) {
		if s := strings.TrimSpace(m[1]); s != "" {
			d.WhenToUseExamples = append(d.WhenToUseExamples, s)
		}
	}
	for k, v := range fm {
		if !slices.Contains(knownFields, k) {
			d.Metadata[k] = v
		}
	}
	return d, nil
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case string:
		return strconv.Atoi(strings.TrimSpace(x))
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}

// LoadDir reads the definitions in the top level of dir (*.md files but
// README.md), in name order. A file that cannot be read is reported in
// errs and skipped; a missing directory has none.
func LoadDir(dir string) (defs []*Definition, errs []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil, errs
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.EqualFold(filepath.Ext(name), ".md") || strings.EqualFold(name, "readme.md") {
			continue
		}
		d, err := readDefinition(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, errs
}

// AgentDirs are the folders, relative to a project or to the user's home,
// definitions are read from, the first winning on a name clash.
var AgentDirs = []string{".agents/agents", ".openhands/agents"}

// Discover returns the definitions of the project in workDir and of the
// user whose home is home (either may be ""), tagged with their level: a
// project's win over the user's, and within each .agents/agents wins over
// .openhands/agents.
func Discover(workDir, home string) (defs []*Definition, errs []error) {
	seen := map[string]bool{}
	for _, root := range []struct{ dir, level string }{{workDir, LevelProject}, {home, LevelUser}} {
		if root.dir == "" {
			continue
		}
		for _, sub := range AgentDirs {
			found, e := LoadDir(filepath.Join(root.dir, sub))
			errs = append(errs, e...)
			for _, d := range found {
				if seen[d.Name] {
					continue
				}
				seen[d.Name] = true
				d.Level = new(root.level)
				defs = append(defs, d)
			}
		}
	}
	return defs, errs
}

//go:embed agents/*.md
var builtinFS embed.FS

// Builtins returns gohands' own sub-agents: general-purpose (the default),
// code-explorer, bash-runner and, when a browser can run,
// web-researcher.
func Builtins() []*Definition {
	entries, _ := builtinFS.ReadDir("agents")
	var defs []*Definition
	for _, e := range entries {
		data, err := builtinFS.ReadFile("agents/" + e.Name())
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		d, err := ParseDefinition("agents/"+e.Name(), data)
		if err != nil {
			panic(err) // a broken built-in is a bug the tests catch
		}
		if browserOnly[d.Name] && !browserRuns() {
			continue
		}
		d.Source, d.Level = nil, new(LevelBuiltin)
		defs = append(defs, d)
	}
	return defs
}

// browserOnly are the built-ins left out when no browser can run, as the
// reference leaves them out without its browser tools.
var browserOnly = map[string]bool{"web-researcher": true}

// browserToolSet is the browser tool set's registry name (package
// tools/browser, which this package does not import).
const browserToolSet = "browser_tool_set"

// browserRuns reports whether the browser tool set is linked in and makes
// tools here (it makes none without a Chromium). Resolving starts no
// browser: it starts on a tool's first action.
func browserRuns() bool {
	tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: browserToolSet})
	if err != nil {
		return false
	}
	tool.CloseAll(tools)
	return len(tools) > 0
}

// The programmatic registry: definitions applications add, which win over
// files.
var registry = struct {
	sync.RWMutex
	defs map[string]*Definition
}{defs: map[string]*Definition{}}

// Register adds a definition that wins over the project's, the user's and
// the built-in ones of the same name. It fails if the name is taken.
func Register(d *Definition) error {
	if d == nil || d.Name == "" {
		return errors.New("task: a definition needs a name")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.defs[d.Name]; ok {
		return fmt.Errorf("task: agent %q already registered", d.Name)
	}
	c := *d
	if c.Level == nil {
		c.Level = new(LevelProgrammatic)
	}
	registry.defs[d.Name] = &c
	return nil
}

// Unregister removes a definition added by Register.
func Unregister(name string) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.defs, name)
}

// LoadFiles reads the definition files of plugins (plugin.Set's
// AgentFiles), tagged with the plugin level; of two with one name the
// first wins. A file that cannot be read is reported in errs and skipped.
func LoadFiles(paths []string) (defs []*Definition, errs []error) {
	seen := map[string]bool{}
	for _, p := range paths {
		d, err := readDefinition(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		d.Level = new(LevelPlugin)
		defs = append(defs, d)
	}
	return defs, errs
}

// Available returns the definitions a conversation in workDir can use:
// registered ones, then the project's, the user's (home), then the
// built-ins, the first of a name winning; sorted by name.
func Available(workDir, home string) (defs []*Definition, errs []error) {
	return available(workDir, home, nil)
}

// available is Available with the plugins' definitions after the
// registered ones, as the reference ranks them; but a plugin's definition
// never replaces a built-in of its name, as in 1.58.2's agent server,
// whose registry holds the built-ins before any plugin registers (a
// project's or user's file still does, as 1.58.2's /api/sub-agents lists
// them).
func available(workDir, home string, plugins []*Definition) (defs []*Definition, errs []error) {
	builtins := Builtins()
	seen := map[string]bool{}
	add := func(ds []*Definition) {
		for _, d := range ds {
			if !seen[d.Name] {
				seen[d.Name] = true
				defs = append(defs, d)
			}
		}
	}
	registry.RLock()
	var reg []*Definition
	for _, d := range registry.defs {
		reg = append(reg, d)
	}
	registry.RUnlock()
	add(reg)
	for _, d := range plugins {
		if !slices.ContainsFunc(builtins, func(b *Definition) bool { return b.Name == d.Name }) {
			add([]*Definition{d})
		}
	}
	found, errs := Discover(workDir, home)
	add(found)
	add(builtins)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs, errs
}

// readDefinition reads and parses the definition file at p.
func readDefinition(p string) (*Definition, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return ParseDefinition(p, data)
}
