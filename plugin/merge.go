package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/skill"
)

// Set is what plugins add to an agent.
type Set struct {
	// Skills are merged by name, a later plugin's replacing an earlier
	// skill where it was.
	Skills []skill.Skill
	// MCPConfig is merged by server name, the later plugin winning.
	MCPConfig map[string]json.RawMessage
	// Hooks are every plugin's hooks, in the order of the plugins; nil
	// when none has any.
	Hooks *hook.Config
	// AgentFiles are every plugin's sub-agent definition files
	// (Plugin.AgentFiles), in the order of the plugins: of two
	// definitions with one name the first wins, as the reference
	// registers a plugin agent only when its name is free.
	AgentFiles []string
	// Names are the plugins added, in order.
	Names []string
}

// Add merges p into the set.
func (s *Set) Add(p *Plugin) {
	s.Names = append(s.Names, p.Name())
	s.Skills = MergeSkills(s.Skills, p.AllSkills())
	s.AgentFiles = append(s.AgentFiles, p.AgentFiles...)
	if len(p.MCPConfig) > 0 && s.MCPConfig == nil {
		s.MCPConfig = map[string]json.RawMessage{}
	}
	for k, v := range p.MCPConfig {
		if _, ok := s.MCPConfig[k]; ok {
			slog.Warn("plugin: MCP server replaced", "server", k, "plugin", p.Name())
		}
		s.MCPConfig[k] = v
	}
	if !p.Hooks.IsEmpty() {
		s.Hooks = MergeHooks(s.Hooks, p.Hooks)
	}
}

// MergeSkills returns base with add merged in by name: a skill of add
// replaces the one of base with its name, where it stood; the others are
// appended in order.
func MergeSkills(base, add []skill.Skill) []skill.Skill {
	out := slices.Clone(base)
	at := make(map[string]int, len(out))
	for i, s := range out {
		at[s.Name] = i
	}
	for _, s := range add {
		if i, ok := at[s.Name]; ok {
			out[i] = s
			continue
		}
		at[s.Name] = len(out)
		out = append(out, s)
	}
	return out
}

// MergeHooks concatenates hook configurations, a's hooks running first.
func MergeHooks(a, b *hook.Config) *hook.Config {
	if a.IsEmpty() {
		return b
	}
	if b.IsEmpty() {
		return a
	}
	return &hook.Config{
		PreToolUse:       slices.Concat(a.PreToolUse, b.PreToolUse),
		PostToolUse:      slices.Concat(a.PostToolUse, b.PostToolUse),
		UserPromptSubmit: slices.Concat(a.UserPromptSubmit, b.UserPromptSubmit),
		SessionStart:     slices.Concat(a.SessionStart, b.SessionStart),
		SessionEnd:       slices.Concat(a.SessionEnd, b.SessionEnd),
		Stop:             slices.Concat(a.Stop, b.Stop),
	}
}

// Resolved is a plugin source pinned to what was fetched (the
// reference's ResolvedPluginSource), credentials removed from its URL.
type Resolved struct {
	Source      string  `json:"source"`
	ResolvedRef *string `json:"resolved_ref"`
	RepoPath    *string `json:"repo_path"`
	OriginalRef *string `json:"original_ref"`
}

// LoadSources fetches and loads the plugins of srcs, in order, and returns
// them merged with where each was pinned. The first that cannot be fetched
// or loaded is an error naming its source.
func LoadSources(ctx context.Context, srcs []Source, opts *FetchOptions) (*Set, []Resolved, error) {
	set := &Set{}
	var pins []Resolved
	for _, src := range srcs {
		dir, commit, err := Fetch(ctx, src, opts)
		if err != nil {
			return nil, nil, err
		}
		p, err := Load(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (source %s)", err, Redact(src.Source))
		}
		set.Add(p)
		r := Resolved{Source: Redact(src.Source), RepoPath: src.RepoPath, OriginalRef: src.Ref}
		if commit != "" {
			r.ResolvedRef = &commit
		}
		pins = append(pins, r)
	}
	return set, pins, nil
}

// UserDirs are the directories of a user's plugins, relative to the home
// directory, most important first.
var UserDirs = []string{".agents/plugins", ".openhands/plugins"}

// ProjectDirs are the directories of a project's plugins, relative to the
// project's root, most important first.
var ProjectDirs = []string{".agents/plugins", ".openhands/plugins"}

// InstalledDir is where installed plugins are kept for a user whose
// OpenHands directory is persistDir.
func InstalledDir(persistDir string) string { return filepath.Join(persistDir, "plugins", "installed") }

// Ambient loads the plugins every conversation gets, as in the reference:
// the user's (home's UserDirs, then the enabled installed plugins) and the
// project's (workDir's ProjectDirs, then those of its git root), a
// project's plugin replacing a user's of the same name, and within each
// the first found winning. A plugin that cannot be loaded is left out and
// reported. Empty home or workDir skip that side.
func Ambient(workDir, home string) ([]*Plugin, []skill.Warning) {
	var warns []skill.Warning
	byName := map[string]int{}
	var out []*Plugin
	put := func(p *Plugin) {
		if i, ok := byName[p.Name()]; ok {
			out[i] = p
			return
		}
		byName[p.Name()] = len(out)
		out = append(out, p)
	}
	scan := func(dirs []string, skip string) []*Plugin {
		var found []*Plugin
		seen := map[string]bool{}
		for _, d := range dirs {
			entries, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range entries {
				p := filepath.Join(d, e.Name())
				if info, err := os.Stat(p); err != nil || !info.IsDir() || sameDir(p, skip) {
					continue
				}
				pl, err := Load(p)
				if err != nil {
					warns = append(warns, skill.Warning{Path: p, Err: err})
					continue
				}
				warns = append(warns, pl.Warnings...)
				if seen[pl.Name()] {
					continue
				}
				seen[pl.Name()] = true
				found = append(found, pl)
			}
		}
		return found
	}
	if home != "" {
		persist := skill.PersistenceDir(home)
		installed := InstalledDir(persist)
		dirs := []string{filepath.Join(home, ".agents", "plugins"), filepath.Join(persist, "plugins")}
		user := scan(dirs, installed)
		names := map[string]bool{}
		for _, p := range user {
			names[p.Name()] = true
		}
		for _, p := range scanInstalled(installed, &warns) {
			if !names[p.Name()] {
				user = append(user, p)
			}
		}
		for _, p := range user {
			put(p)
		}
	}
	if workDir != "" {
		roots := []string{workDir}
		if g := skill.GitRoot(workDir); g != "" && !sameDir(g, workDir) {
			roots = append(roots, g)
		}
		var dirs []string
		for _, r := range roots {
			for _, d := range ProjectDirs {
				dirs = append(dirs, filepath.Join(r, filepath.FromSlash(d)))
			}
		}
		for _, p := range scan(dirs, "") {
			put(p)
		}
	}
	return out, warns
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}
