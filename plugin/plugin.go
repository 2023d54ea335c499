// Package plugin loads plugins: directories that bundle skills, slash
// commands, hooks and MCP servers, in the layout of the reference 1.58.2
// (the Claude Code layout with its manifest in .plugin/plugin.json or
// .claude-plugin/plugin.json, and the Agent Plugins layout with a root
// plugin.json that names its $schema). Fetch brings a plugin from a git
// repository or a local path; Merge adds plugins to an agent's skills, MCP
// servers and hooks.
//
// Registered marketplaces (LoadRegistered) are fetched at a conversation's
// start only when they auto-load something, as in 1.58.2; the others are
// fetched when load_plugin asks for one of their plugins. Like 1.58.2,
// which runs git fetch on its cached clone at every start, a start asks
// the remote again (one git ls-remote) so a moved branch is seen; unlike
// it, an unchanged commit is not fetched again (each commit has its own
// cached copy), and a remote that cannot be reached falls back to the
// commit the last fetch resolved to, as 1.58.2 falls back to its clone.
// A hanging remote still costs its fetch timeout at each start that
// auto-loads it.
package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/skill"
)

// ManifestDirs are the directories of a Claude Code layout manifest, in the
// order they are looked for.
var ManifestDirs = []string{".plugin", ".claude-plugin"}

// ManifestFile is the manifest's file name.
const ManifestFile = "plugin.json"

// AgentPluginsSchema is the only $schema of an Agent Plugins manifest the
// reference accepts.
const AgentPluginsSchema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"

// extensionDir holds an Agent Plugins package's OpenHands-specific parts
// (commands, agents, hooks).
const extensionDir = "dev.openhands"

// Author is a plugin's author. The manifest may give it as an object or
// as "Name <email>".
type Author struct {
	Name  string  `json:"name"`
	Email *string `json:"email"`
	URL   *string `json:"url"`
}

// Manifest is a plugin's plugin.json. Fields the manifest has beyond these
// are kept in Extra and written back.
type Manifest struct {
	Name         string  `json:"name"`
	Version      string  `json:"version"`
	Description  string  `json:"description"`
	Author       *Author `json:"author"`
	EntryCommand *string `json:"entry_command"`
	// Extra holds the manifest's other keys.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON writes the known fields and the extra ones.
func (m Manifest) MarshalJSON() ([]byte, error) {
	type plain Manifest
	known, err := json.Marshal(plain(m))
	if err != nil || len(m.Extra) == 0 {
		return known, err
	}
	all := map[string]json.RawMessage{}
	if err := json.Unmarshal(known, &all); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// Command is a slash command of a plugin (commands/<name>.md).
type Command struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	ArgumentHint *string        `json:"argument_hint"`
	AllowedTools []string       `json:"allowed_tools"`
	Content      string         `json:"content"`
	Source       *string        `json:"source"`
	Metadata     map[string]any `json:"metadata"`
}

// Skill is the command as a skill triggered by "/<plugin>:<command>".
func (c *Command) Skill(plugin string) skill.Skill {
	var parts []string
	if c.Description != "" {
		parts = append(parts, "## "+c.Name+"\n\n"+c.Description+"\n")
	}
	if c.ArgumentHint != nil {
		parts = append(parts, "**Arguments**: `$ARGUMENTS` - "+*c.ArgumentHint+"\n")
	}
	if c.Content != "" {
		parts = append(parts, "\n"+c.Content)
	}
	desc := c.Description
	if desc == "" {
		desc = "Command " + c.Name + " from " + plugin
	}
	s := skill.Skill{
		Name:        plugin + ":" + c.Name,
		Content:     strings.TrimSpace(strings.Join(parts, "\n")),
		Trigger:     &skill.Trigger{Type: skill.TriggerKeyword, Words: []string{"/" + plugin + ":" + c.Name}},
		Description: desc,
	}
	if c.Source != nil {
		s.Source = *c.Source
	}
	if len(c.AllowedTools) > 0 {
		s.AllowedTools = c.AllowedTools
	}
	s.Normalize()
	return s
}

// Plugin is a loaded plugin.
type Plugin struct {
	Manifest Manifest `json:"manifest"`
	// Path is the plugin's directory, absolute, with forward slashes.
	Path   string        `json:"path"`
	Skills []skill.Skill `json:"skills"`
	// Hooks is nil when the plugin has no hooks/hooks.json (or an invalid
	// one, which is reported in Warnings).
	Hooks *hook.Config `json:"hooks"`
	// MCPConfig is the plugin's MCP servers by name, as JSON.
	MCPConfig map[string]json.RawMessage `json:"mcp_config"`
	Commands  []Command                  `json:"commands"`
	// AgentFiles are the plugin's sub-agent definitions (agents/*.md,
	// README.md aside, in name order; dev.openhands/agents/ in the Agent
	// Plugins layout), absolute. Package tools/task reads them.
	AgentFiles []string `json:"-"`
	// Warnings are the parts of the plugin that were left out, each naming
	// its file.
	Warnings []skill.Warning `json:"-"`
}

// Name is the manifest's name.
func (p *Plugin) Name() string { return p.Manifest.Name }

// AllSkills is the plugin's skills followed by its commands as skills.
func (p *Plugin) AllSkills() []skill.Skill {
	out := append([]skill.Skill(nil), p.Skills...)
	for i := range p.Commands {
		out = append(out, p.Commands[i].Skill(p.Name()))
	}
	return out
}

// Load reads the plugin in dir. A malformed manifest is an error naming
// its file; a part of the plugin that cannot be read (a skill, the hooks,
// the MCP servers, a command) is left out and listed in Warnings, as the
// reference does.
func Load(dir string) (*Plugin, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("plugin: plugin directory not found: %s", abs)
	}
	p := &Plugin{Path: filepath.ToSlash(abs), MCPConfig: map[string]json.RawMessage{}}
	warn := func(path string, err error) {
		slog.Warn("plugin: part not loaded", "path", path, "err", err)
		p.Warnings = append(p.Warnings, skill.Warning{Path: path, Err: err})
	}
	ext := abs // where hooks/ and commands/ are
	mcpFile := filepath.Join(abs, ".mcp.json")
	if agentPlugins(abs) {
		if p.Manifest, err = loadAgentPluginsManifest(abs); err != nil {
			return nil, err
		}
		ext = filepath.Join(abs, extensionDir)
		mcpFile = filepath.Join(abs, "mcp.json")
	} else if p.Manifest, err = loadManifest(abs); err != nil {
		return nil, err
	}
	p.Skills = loadSkills(abs, warn)
	p.Hooks = loadHooks(ext, abs, warn)
	p.MCPConfig = loadMCP(mcpFile, abs, warn)
	p.Commands = loadCommands(ext, abs, warn)
	p.AgentFiles = agentFiles(ext, abs)
	return p, nil
}

// agentPlugins reports whether dir is an Agent Plugins package: a root
// plugin.json that names a $schema, or that is not a JSON object at all
// (so that loading it reports the error instead of falling back).
func agentPlugins(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), &m) != nil {
		return true
	}
	_, ok := m["$schema"]
	return ok
}

// loadManifest reads a Claude Code layout manifest, or makes one from the
// directory's name when there is none.
func loadManifest(dir string) (Manifest, error) {
	for _, d := range ManifestDirs {
		path := filepath.Join(dir, d, ManifestFile)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if !skill.Within(path, dir) {
			return Manifest{}, fmt.Errorf("plugin: manifest %s resolves outside the plugin directory", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return Manifest{}, fmt.Errorf("plugin: manifest %s: %w", path, err)
		}
		m, err := parseManifest(data)
		if err != nil {
			return Manifest{}, fmt.Errorf("plugin: manifest %s: %w", path, err)
		}
		return m, nil
	}
	name := filepath.Base(dir)
	return Manifest{Name: name, Version: "1.0.0", Description: "Plugin loaded from " + name}, nil
}

// parseManifest decodes a plugin.json: name is required, author may be a
// string, version defaults to 1.0.0.
func parseManifest(data []byte) (Manifest, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Manifest{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if raw == nil {
		return Manifest{}, errors.New("not a JSON object")
	}
	m := Manifest{Version: "1.0.0", Extra: map[string]json.RawMessage{}}
	str := func(key string, dst *string) error {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s: not a string", key)
		}
		return nil
	}
	if err := str("name", &m.Name); err != nil {
		return Manifest{}, err
	}
	if strings.TrimSpace(m.Name) == "" {
		return Manifest{}, errors.New(`"name" is required`)
	}
	if err := str("version", &m.Version); err != nil {
		return Manifest{}, err
	}
	if err := str("description", &m.Description); err != nil {
		return Manifest{}, err
	}
	if v, ok := raw["entry_command"]; ok && string(v) != "null" {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Manifest{}, errors.New("entry_command: not a string")
		}
		m.EntryCommand = &s
	}
	if v, ok := raw["author"]; ok && string(v) != "null" {
		var s string
		if json.Unmarshal(v, &s) == nil {
			m.Author = authorOf(s)
		} else {
			var a Author
			if err := json.Unmarshal(v, &a); err != nil {
				return Manifest{}, fmt.Errorf("author: %w", err)
			}
			m.Author = &a
		}
	}
	for k, v := range raw {
		switch k {
		case "name", "version", "description", "author", "entry_command":
		default:
			m.Extra[k] = v
		}
	}
	return m, nil
}

// authorOf reads "Name <email>".
func authorOf(s string) *Author {
	if i, j := strings.Index(s, "<"), strings.Index(s, ">"); i >= 0 && j > i {
		email := strings.TrimSpace(s[i+1 : j])
		return &Author{Name: strings.TrimSpace(s[:i]), Email: &email}
	}
	return &Author{Name: strings.TrimSpace(s)}
}

// agentPluginsName is the Agent Plugins schema's rule for a plugin name.
var agentPluginsName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// agentPluginsFields are the top-level keys of an Agent Plugins manifest;
// others are ignored, as the standard asks.
var agentPluginsFields = map[string]bool{
	"$schema": true, "name": true, "version": true, "description": true, "author": true,
	"homepage": true, "repository": true, "license": true, "keywords": true, "extensions": true,
}

// loadAgentPluginsManifest reads the root plugin.json of an Agent Plugins
// package.
func loadAgentPluginsManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	if !skill.Within(path, dir) {
		return Manifest{}, fmt.Errorf("plugin: manifest %s resolves outside the plugin directory", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: %w", path, err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: invalid JSON or not an object: %w", path, err)
	}
	var schema string
	_ = json.Unmarshal(raw["$schema"], &schema)
	if schema != AgentPluginsSchema {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: unsupported or missing $schema %s (supported: %s)", path, raw["$schema"], AgentPluginsSchema)
	}
	var entry *string
	for k := range raw {
		if !agentPluginsFields[k] {
			slog.Warn("plugin: unknown manifest field ignored", "path", path, "field", k)
			delete(raw, k)
		}
	}
	if ext, ok := raw["extensions"]; ok {
		var exts map[string]json.RawMessage
		if json.Unmarshal(ext, &exts) != nil {
			delete(raw, "extensions")
		} else if ours, ok := exts[extensionDir]; ok {
			var o struct {
				EntryCommand any `json:"entry_command"`
			}
			if json.Unmarshal(ours, &o) == nil {
				if s, ok := o.EntryCommand.(string); ok && s != "" {
					entry = &s
				}
			}
		}
	}
	delete(raw, "entry_command")
	clean, _ := json.Marshal(raw)
	m, err := parseManifest(clean)
	if err != nil {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: %w", path, err)
	}
	if !agentPluginsName.MatchString(m.Name) || len(m.Name) > 64 {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: name %q must be lower-case letters and digits in words joined by hyphens", path, m.Name)
	}
	if _, ok := raw["version"]; !ok {
		return Manifest{}, fmt.Errorf("plugin: manifest %s: \"version\" is required", path)
	}
	m.EntryCommand = entry
	return m, nil
}

// loadSkills reads skills/ (one level: <name>/SKILL.md and *.md), or a
// root SKILL.md when there is no skills/.
func loadSkills(dir string, warn func(string, error)) []skill.Skill {
	sd := filepath.Join(dir, "skills")
	if _, err := os.Lstat(sd); err == nil {
		if !skill.Within(sd, dir) {
			return nil
		}
		if info, err := os.Stat(sd); err != nil || !info.IsDir() {
			warn(sd, errors.New("not a directory"))
			return nil
		}
		skills, warns := skill.LoadPluginDir(sd, dir)
		for _, w := range warns {
			warn(w.Path, w.Err)
		}
		return skills
	}
	for _, name := range []string{"SKILL.md", "skill.md"} {
		md := filepath.Join(dir, name)
		if _, err := os.Stat(md); err != nil || !skill.Within(md, dir) {
			continue
		}
		s, err := skill.ParsePluginFile(md, "")
		if err != nil {
			warn(md, err)
			return nil
		}
		// The plugin's own .mcp.json is the plugin's, not this skill's.
		s.MCPTools = nil
		return []skill.Skill{s}
	}
	return nil
}

// loadHooks reads hooks/hooks.json under root.
func loadHooks(root, dir string, warn func(string, error)) *hook.Config {
	path := filepath.Join(root, "hooks", "hooks.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(path, err)
		}
		return nil
	}
	if !skill.Within(path, dir) {
		return nil
	}
	c, err := hook.Parse(data)
	if err != nil {
		warn(path, err)
		return nil
	}
	return c
}

// loadMCP reads the "mcpServers" of the plugin's MCP file, with
// ${SKILL_ROOT} and ${CLAUDE_PLUGIN_ROOT} replaced by the plugin's
// directory. Other ${VAR} references are kept for when the conversation's
// secrets are known.
func loadMCP(path, dir string, warn func(string, error)) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(path, err)
		}
		return out
	}
	if !skill.Within(path, dir) {
		return out
	}
	root, _ := json.Marshal(filepath.ToSlash(dir))
	root = root[1 : len(root)-1]
	for _, v := range []string{"${SKILL_ROOT}", "${CLAUDE_PLUGIN_ROOT}"} {
		data = bytes.ReplaceAll(data, []byte(v), root)
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		warn(path, fmt.Errorf("invalid JSON: %w", err))
		return out
	}
	for name, s := range f.MCPServers {
		var obj map[string]json.RawMessage
		if json.Unmarshal(s, &obj) != nil {
			warn(path, fmt.Errorf("MCP server %q is not an object", name))
			return map[string]json.RawMessage{}
		}
		out[name] = s
	}
	return out
}

// loadCommands reads commands/*.md under root.
func loadCommands(root, dir string, warn func(string, error)) []Command {
	cd := filepath.Join(root, "commands")
	if !skill.Within(cd, dir) {
		return nil
	}
	entries, err := os.ReadDir(cd)
	if err != nil {
		return nil
	}
	var out []Command
	for _, e := range entries {
		p := filepath.Join(cd, e.Name())
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".md") || strings.EqualFold(e.Name(), "README.md") || !skill.Within(p, dir) {
			continue
		}
		c, err := loadCommand(p)
		if err != nil {
			warn(p, err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// agentFiles lists the top-level *.md files of agents/ under root but
// README.md, in name order, leaving out those that resolve outside the
// plugin's directory dir.
func agentFiles(root, dir string) []string {
	ad := filepath.Join(root, "agents")
	entries, err := os.ReadDir(ad) // sorted by name
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(ad, e.Name())
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".md") || e.Name() == "README.md" || e.Name() == "readme.md" || !skill.Within(p, dir) {
			continue
		}
		if info, err := os.Stat(p); err != nil || info.IsDir() {
			continue
		}
		out = append(out, p)
	}
	return out
}
