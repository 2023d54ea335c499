package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gohands/gohands/internal/varref"
	"github.com/gohands/gohands/skill"
)

// MarketplaceFile is a marketplace's manifest, in one of ManifestDirs.
const MarketplaceFile = "marketplace.json"

// MarketplaceSource is a marketplace plugin's source given as an object:
// a GitHub repository ("github", Repo) or a git URL ("url", URL).
type MarketplaceSource struct {
	Source string  `json:"source"`
	Repo   *string `json:"repo"`
	URL    *string `json:"url"`
	Ref    *string `json:"ref"`
	Path   *string `json:"path"`
}

// MarketplaceEntry is a plugin or a standalone skill of a marketplace.
// Source is a path relative to the marketplace, an absolute path or URL,
// or (plugins only) a MarketplaceSource object.
type MarketplaceEntry struct {
	Name        string          `json:"name"`
	Source      json.RawMessage `json:"source"`
	Description *string         `json:"description"`
	Version     *string         `json:"version"`
}

// Marketplace is a marketplace.json: plugins and standalone skills.
type Marketplace struct {
	Name  string `json:"name"`
	Owner struct {
		Name  string  `json:"name"`
		Email *string `json:"email"`
	} `json:"owner"`
	Description *string            `json:"description"`
	Plugins     []MarketplaceEntry `json:"plugins"`
	Skills      []MarketplaceEntry `json:"skills"`
	// Path is the marketplace's directory.
	Path string `json:"path"`
}

// LoadMarketplace reads the marketplace in dir (its manifest in .plugin/
// or .claude-plugin/). Without a manifest, the AgentSkills directories of
// dir's skills/ or .skills/ (or of dir itself) are its skills, as in the
// reference; with neither it is an error.
func LoadMarketplace(dir, name string) (*Marketplace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("marketplace: %w", err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for _, d := range ManifestDirs {
		path := filepath.Join(abs, d, MarketplaceFile)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("marketplace: %w", err)
		}
		var m Marketplace
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("marketplace: invalid JSON in %s: %w", path, err)
		}
		if m.Name == "" {
			return nil, fmt.Errorf("marketplace: %s: \"name\" is required", path)
		}
		for _, e := range slices.Concat(m.Plugins, m.Skills) {
			if e.Name == "" || len(e.Source) == 0 {
				return nil, fmt.Errorf("marketplace: %s: every entry needs a name and a source", path)
			}
		}
		m.Path = abs
		return &m, nil
	}
	m := &Marketplace{Name: name, Path: abs}
	m.Owner.Name = name
	roots := []string{}
	for _, d := range []string{"skills", ".skills"} {
		if info, err := os.Stat(filepath.Join(abs, d)); err == nil && info.IsDir() {
			roots = append(roots, filepath.Join(abs, d))
		}
	}
	if len(roots) == 0 {
		roots = []string{abs}
	}
	seen := map[string]bool{}
	for _, r := range roots {
		entries, _ := os.ReadDir(r)
		for _, e := range entries {
			sub := filepath.Join(r, e.Name())
			if !e.IsDir() || findSkillMD(sub) == "" {
				continue
			}
			s, err := skill.ParsePluginFile(findSkillMD(sub), "")
			if err != nil || seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			rel, _ := filepath.Rel(abs, sub)
			src, _ := json.Marshal("./" + filepath.ToSlash(rel))
			m.Skills = append(m.Skills, MarketplaceEntry{Name: s.Name, Source: src})
		}
	}
	if len(m.Skills) == 0 {
		return nil, fmt.Errorf("marketplace: no %s in %s or .claude-plugin under %s, and no skill folders (<name>/SKILL.md) there", MarketplaceFile, ManifestDirs[0], abs)
	}
	return m, nil
}

func findSkillMD(dir string) string {
	for _, n := range []string{"SKILL.md", "skill.md"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// Resolve returns where an entry of m is: a relative source is a
// directory of the marketplace, which it must not leave.
func (m *Marketplace) Resolve(e *MarketplaceEntry) (Source, error) {
	var s string
	if err := json.Unmarshal(e.Source, &s); err != nil {
		var obj MarketplaceSource
		if err := json.Unmarshal(e.Source, &obj); err != nil {
			return Source{}, fmt.Errorf("marketplace %s: entry %q: source is neither a string nor a source object", m.Name, e.Name)
		}
		switch {
		case obj.Source == "github" && obj.Repo != nil && *obj.Repo != "":
			return Source{Source: "github:" + *obj.Repo, Ref: obj.Ref, RepoPath: obj.Path}, nil
		case obj.Source == "url" && obj.URL != nil && *obj.URL != "":
			return Source{Source: *obj.URL, Ref: obj.Ref, RepoPath: obj.Path}, nil
		}
		return Source{}, fmt.Errorf("marketplace %s: entry %q: source type %q is missing its repo or url", m.Name, e.Name, obj.Source)
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.Contains(s, "://") || strings.HasPrefix(s, "github:") {
		return Source{Source: s}, nil
	}
	p := filepath.Join(m.Path, filepath.FromSlash(s))
	if !skill.Within(p, m.Path) {
		return Source{}, fmt.Errorf("marketplace %s: entry %q: source %q points outside the marketplace's directory", m.Name, e.Name, s)
	}
	return Source{Source: p}, nil
}

// Plugin returns the plugin entry of that name, or nil.
func (m *Marketplace) Plugin(name string) *MarketplaceEntry {
	for i := range m.Plugins {
		if m.Plugins[i].Name == name {
			return &m.Plugins[i]
		}
	}
	return nil
}

// Registration is a marketplace an agent context registers
// (agent_context.registered_marketplaces): where it is and which of its
// plugins and skills every conversation loads (AutoLoad: true, false or a
// list of names).
type Registration struct {
	Name     string          `json:"name"`
	Source   string          `json:"source"`
	Ref      *string         `json:"ref"`
	RepoPath *string         `json:"repo_path"`
	AutoLoad json.RawMessage `json:"auto_load"`
}

// ExpandRegistrations returns regs with the ${NAME} references in each
// source and ref replaced by the secrets lookup knows, as the reference
// does with the conversation's secrets before it fetches a marketplace:
// the environment is not read, $NAME and the default of ${NAME:-default}
// are kept as written. A nil lookup changes nothing.
func ExpandRegistrations(regs []Registration, lookup func(name string) (string, bool)) []Registration {
	if lookup == nil || len(regs) == 0 {
		return regs
	}
	out := slices.Clone(regs)
	for i := range out {
		out[i].Source = varref.Expand(out[i].Source, lookup, varref.Options{})
		if out[i].Ref != nil {
			out[i].Ref = new(varref.Expand(*out[i].Ref, lookup, varref.Options{}))
		}
	}
	return out
}

// AutoLoads reports whether the registration loads the plugin or skill
// name at the start of a conversation.
func (r *Registration) AutoLoads(name string) bool {
	var b bool
	if json.Unmarshal(r.AutoLoad, &b) == nil {
		return b
	}
	var names []string
	return json.Unmarshal(r.AutoLoad, &names) == nil && slices.Contains(names, name)
}

// AutoLoadsAny reports whether the registration auto-loads anything:
// auto_load is true or a list of names that is not empty.
func (r *Registration) AutoLoadsAny() bool {
	var b bool
	if json.Unmarshal(r.AutoLoad, &b) == nil {
		return b
	}
	var names []string
	return json.Unmarshal(r.AutoLoad, &names) == nil && len(names) > 0
}

// Fetch fetches and loads the registration's marketplace.
func (r *Registration) Fetch(ctx context.Context, opts *FetchOptions) (*Marketplace, error) {
	dir, _, err := Fetch(ctx, Source{Source: r.Source, Ref: r.Ref, RepoPath: r.RepoPath}, opts)
	if err != nil {
		return nil, fmt.Errorf("marketplace %s: %w", r.Name, err)
	}
	return LoadMarketplace(dir, r.Name)
}

// LoadRegistered loads what the registrations auto-load: the standalone
// skills first, then the plugins (which win on a name clash). A
// marketplace, plugin or skill that cannot be loaded is left out and
// reported, as the reference does; one whose remote cannot be reached is
// loaded from the copy fetched last time if there is one, with a warning
// (FetchOptions.Stale), as the reference falls back to its cached clone.
// A registration that auto-loads nothing
// is not fetched at all (as in 1.58.2, which fetches only the auto_load
// registrations at a start): it costs a conversation's start nothing, and
// is fetched when load_plugin or a skill listing asks for it.
func LoadRegistered(ctx context.Context, regs []Registration, opts *FetchOptions) (*Set, []skill.Warning) {
	set := &Set{}
	var warns []skill.Warning
	var skills []skill.Skill
	var plugins []*Plugin
	var o FetchOptions
	if opts != nil {
		o = *opts
	}
	opts = &o
	for i := range regs {
		r := &regs[i]
		if !r.AutoLoadsAny() {
			continue
		}
		o.Stale = func(err error) {
			warns = append(warns, skill.Warning{Path: Redact(r.Source), Err: fmt.Errorf("marketplace %s: using the copy fetched before: %w", r.Name, err)})
		}
		m, err := r.Fetch(ctx, opts)
		if err != nil {
			warns = append(warns, skill.Warning{Path: Redact(r.Source), Err: err})
			continue
		}
		for j := range m.Plugins {
			e := &m.Plugins[j]
			if !r.AutoLoads(e.Name) {
				continue
			}
			src, err := m.Resolve(e)
			if err == nil {
				var dir string
				if dir, _, err = Fetch(ctx, src, opts); err == nil {
					var p *Plugin
					if p, err = Load(dir); err == nil {
						plugins = append(plugins, p)
						continue
					}
				}
			}
			warns = append(warns, skill.Warning{Path: m.Path, Err: err})
		}
		for j := range m.Skills {
			e := &m.Skills[j]
			if !r.AutoLoads(e.Name) {
				continue
			}
			src, err := m.Resolve(e)
			if err == nil {
				var dir string
				if dir, _, err = Fetch(ctx, src, opts); err == nil {
					md := findSkillMD(dir)
					if md == "" {
						err = fmt.Errorf("marketplace %s: skill %q has no SKILL.md in %s", m.Name, e.Name, dir)
					} else {
						var s skill.Skill
						if s, err = skill.ParsePluginFile(md, ""); err == nil {
							skills = append(skills, s)
							continue
						}
					}
				}
			}
			warns = append(warns, skill.Warning{Path: m.Path, Err: err})
		}
	}
	set.Skills = MergeSkills(nil, skills)
	for _, p := range plugins {
		set.Add(p)
	}
	return set, warns
}
