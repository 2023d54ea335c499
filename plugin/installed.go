package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gohands/gohands/skill"
)

// MetadataFile records the installed extensions of an installation
// directory.
const MetadataFile = ".installed.json"

// Info is one installed extension (plugin or skill), as the reference
// records it in MetadataFile.
type Info struct {
	Name         string  `json:"name"`
	Version      string  `json:"version"`
	Description  string  `json:"description"`
	Enabled      bool    `json:"enabled"`
	Source       string  `json:"source"`
	RequestedRef *string `json:"requested_ref"`
	ResolvedRef  *string `json:"resolved_ref"`
	RepoPath     *string `json:"repo_path"`
	InstalledAt  string  `json:"installed_at"`
	InstallPath  string  `json:"install_path"`
}

// metadata is MetadataFile's content.
type metadata struct {
	Extensions map[string]*Info `json:"extensions"`
}

var extensionName = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// ValidName checks an installed extension's name: kebab-case.
func ValidName(name string) error {
	if !extensionName.MatchString(name) {
		return fmt.Errorf("invalid extension name: expected kebab-case, got %q", name)
	}
	return nil
}

// Loader reads an extension directory's name, version and description.
type Loader func(dir string) (name, version, description string, err error)

// PluginLoader is the Loader of plugins.
func PluginLoader(dir string) (string, string, string, error) {
	p, err := Load(dir)
	if err != nil {
		return "", "", "", err
	}
	return p.Name(), p.Manifest.Version, p.Manifest.Description, nil
}

// Store is an installation directory: <dir>/<name>/ per extension and
// MetadataFile beside them.
type Store struct {
	Dir  string
	Load Loader
}

func (s *Store) read() (*metadata, error) {
	m := &metadata{Extensions: map[string]*Info{}}
	data, err := os.ReadFile(filepath.Join(s.Dir, MetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]map[string]*Info
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(s.Dir, MetadataFile), err)
	}
	// Older files keep them under "plugins" or "skills".
	for _, k := range []string{"plugins", "skills", "extensions"} {
		for n, i := range raw[k] {
			if i != nil {
				m.Extensions[n] = i
			}
		}
	}
	return m, nil
}

func (s *Store) write(m *metadata) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".installed-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(s.Dir, MetadataFile))
}

// List returns the installed extensions by name, reconciling the metadata
// with the disk: entries whose directory is gone are dropped, directories
// without an entry whose extension loads under their name are added.
func (s *Store) List() ([]Info, error) {
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	changed := false
	for n := range m.Extensions {
		if ValidName(n) != nil {
			delete(m.Extensions, n)
			changed = true
			continue
		}
		if _, err := os.Stat(filepath.Join(s.Dir, n)); err != nil {
			delete(m.Extensions, n)
			changed = true
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || strings.HasPrefix(n, ".") || m.Extensions[n] != nil || ValidName(n) != nil {
			continue
		}
		dir := filepath.Join(s.Dir, n)
		name, version, desc, err := s.Load(dir)
		if err != nil || name != n {
			continue
		}
		m.Extensions[n] = &Info{Name: n, Version: version, Description: desc, Enabled: true, Source: "local",
			InstalledAt: now(), InstallPath: dir}
		changed = true
	}
	if changed {
		if err := s.write(m); err != nil {
			return nil, err
		}
	}
	out := make([]Info, 0, len(m.Extensions))
	for _, i := range m.Extensions {
		out = append(out, *i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// SetEnabled enables or disables an installed extension; false when none
// has that name.
func (s *Store) SetEnabled(name string, on bool) (bool, error) {
	if _, err := s.List(); err != nil {
		return false, err
	}
	m, err := s.read()
	if err != nil {
		return false, err
	}
	i := m.Extensions[name]
	if i == nil {
		return false, nil
	}
	if i.Enabled == on {
		return true, nil
	}
	i.Enabled = on
	return true, s.write(m)
}

// Install copies the extension in dir (already fetched from source) into
// the store under its name: into a temporary directory first, renamed
// into place, so that a failed install leaves nothing half-copied. An
// extension already installed is an error unless force, which replaces it
// and keeps its enabled state.
func (s *Store) Install(dir string, src Source, resolved string, force bool) (Info, error) {
	name, version, desc, err := s.Load(dir)
	if err != nil {
		return Info{}, err
	}
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	dst := filepath.Join(s.Dir, name)
	if _, err := os.Stat(dst); err == nil && !force {
		return Info{}, fmt.Errorf("%w: %q is already installed at %s", fs.ErrExist, name, dst)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Info{}, err
	}
	tmp, err := os.MkdirTemp(s.Dir, ".install-")
	if err != nil {
		return Info{}, err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, name)
	if err := copyTree(dir, staged); err != nil {
		return Info{}, fmt.Errorf("copying %s: %w", dir, err)
	}
	if _, _, _, err := s.Load(staged); err != nil {
		return Info{}, err
	}
	old := filepath.Join(tmp, "old")
	if _, err := os.Stat(dst); err == nil {
		if err := os.Rename(dst, old); err != nil {
			return Info{}, err
		}
	}
	if err := os.Rename(staged, dst); err != nil {
		_ = os.Rename(old, dst)
		return Info{}, err
	}
	m, err := s.read()
	if err != nil {
		return Info{}, err
	}
	info := &Info{Name: name, Version: version, Description: desc, Enabled: true, Source: Redact(src.Source),
		RequestedRef: src.Ref, RepoPath: src.RepoPath, InstalledAt: now(), InstallPath: dst}
	if resolved != "" {
		info.ResolvedRef = &resolved
	}
	if prev := m.Extensions[name]; prev != nil {
		info.Enabled = prev.Enabled
	}
	m.Extensions[name] = info
	return *info, s.write(m)
}

// Enabled loads the enabled installed extensions' directories, by name.
func (s *Store) Enabled() ([]string, error) {
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, i := range list {
		if i.Enabled {
			dirs = append(dirs, filepath.Join(s.Dir, i.Name))
		}
	}
	return dirs, nil
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// copyTree copies a directory without its .git, keeping symbolic links as
// links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && d.Name() == ".git" && rel != "." {
			return filepath.SkipDir
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm())
	})
}

// scanInstalled loads the enabled installed plugins.
func scanInstalled(dir string, warns *[]skill.Warning) []*Plugin {
	st := &Store{Dir: dir, Load: PluginLoader}
	dirs, err := st.Enabled()
	if err != nil {
		*warns = append(*warns, skill.Warning{Path: dir, Err: err})
		return nil
	}
	var out []*Plugin
	for _, d := range dirs {
		p, err := Load(d)
		if err != nil {
			*warns = append(*warns, skill.Warning{Path: d, Err: err})
			continue
		}
		out = append(out, p)
	}
	return out
}

// Uninstall removes an installed extension; false when none has that name.
func (s *Store) Uninstall(name string) (bool, error) {
	if err := ValidName(name); err != nil {
		return false, nil
	}
	m, err := s.read()
	if err != nil {
		return false, err
	}
	dir := filepath.Join(s.Dir, name)
	_, statErr := os.Stat(dir)
	if m.Extensions[name] == nil && statErr != nil {
		return false, nil
	}
	// Renamed away first, so that the name is free at once and a failed
	// removal leaves no half-deleted extension under it.
	if statErr == nil {
		tmp, err := os.MkdirTemp(s.Dir, ".uninstall-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(tmp)
		if err := os.Rename(dir, filepath.Join(tmp, name)); err != nil {
			return false, err
		}
	}
	delete(m.Extensions, name)
	return true, s.write(m)
}

// SkillLoader is the Loader of skills: a directory with a SKILL.md that
// follows the AgentSkills rules.
func SkillLoader(dir string) (string, string, string, error) {
	for _, n := range []string{"SKILL.md", "skill.md"} {
		md := filepath.Join(dir, n)
		if _, err := os.Stat(md); err != nil {
			continue
		}
		s, err := skill.ParseFile(md, "")
		if err != nil {
			return "", "", "", fmt.Errorf("%s: %w", md, err)
		}
		return s.Name, s.Version, s.Description, nil
	}
	return "", "", "", fmt.Errorf("skill directory is missing SKILL.md: %s", dir)
}
