package skill

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
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Warning reports a file that could not be loaded; the other skills load
// regardless.
type Warning struct {
	Path string
	Err  error
}

func (w Warning) Error() string { return w.Path + ": " + w.Err.Error() }

// Unwrap returns the cause.
func (w Warning) Unwrap() error { return w.Err }

// thirdPartyNames maps lower-case instruction file names of other agents to
// the skill names they load as.
var thirdPartyNames = map[string]string{
	".cursorrules": "cursorrules",
	"agents.md":    "agents",
	"agent.md":     "agents",
	"claude.md":    "claude",
	"gemini.md":    "gemini",
}

// SplitFrontmatter separates a leading YAML block between "---" lines from
// the body. A file without one has no metadata. Skills and sub-agent
// definitions (package tools/task) are written this way.
func SplitFrontmatter(data []byte) (meta []byte, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") && text != "---" {
		return nil, []byte(text), false
	}
	rest := text[4:]
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		return nil, []byte(strings.TrimPrefix(rest, "---")), true
	}
	before, after, ok0 := strings.Cut(rest, "\n---\n")
	if !ok0 {
		if strings.HasSuffix(rest, "\n---") {
			return []byte(rest[:len(rest)-4]), nil, true
		}
		return nil, []byte(text), false
	}
	return []byte(before), []byte(after), true
}

// ParseFile reads one skill file. baseDir, if not empty, is the skills
// folder the file lies in: a legacy skill without a name in its
// frontmatter is named by its path relative to it, without extension.
// SKILL.md files are AgentSkills skills named by their directory. Files
// named like other agents' instructions (AGENTS.md, CLAUDE.md, …) are
// always-on skills whose content is the whole file.
func ParseFile(path, baseDir string) (Skill, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, err
	}
	return Parse(path, baseDir, data)
}

// Parse is ParseFile on data already read.
func Parse(path, baseDir string, data []byte) (Skill, error) {
	return parse(path, baseDir, data, true)
}

// parse is Parse; strict applies the AgentSkills naming rules to SKILL.md
// files (plugins' skills are loaded without them, as in the reference).
func parse(path, baseDir string, data []byte, strict bool) (Skill, error) {
	base := strings.ToLower(filepath.Base(path))
	if name, ok := thirdPartyNames[base]; ok {
		return Skill{Name: name, Content: string(data), Source: filepath.ToSlash(path), Version: DefaultVersion}, nil
	}
	metaText, body, _ := SplitFrontmatter(data)
	meta := map[string]any{}
	if len(bytes.TrimSpace(metaText)) > 0 {
		var v any
		if err := yaml.Unmarshal(metaText, &v); err != nil {
			return Skill{}, fmt.Errorf("frontmatter: %w", err)
		}
		m, ok := v.(map[string]any)
		if v != nil && !ok {
			return Skill{}, fmt.Errorf("frontmatter is a %s, not a mapping", yamlKind(v))
		}
		if m != nil {
			meta = m
		}
	}
	s := Skill{Content: strings.TrimSpace(string(body)), Source: filepath.ToSlash(path)}
	var dirName string
	if base == "skill.md" {
		s.IsAgentSkillsFormat = true
		dirName = filepath.Base(filepath.Dir(path))
		s.Name = dirName
	} else if baseDir != "" {
		rel, err := filepath.Rel(baseDir, path)
		if err != nil {
			return Skill{}, err
		}
		s.Name = filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel)))
	} else {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if err := applyMeta(&s, meta); err != nil {
		return Skill{}, err
	}
	if s.IsAgentSkillsFormat {
		if strict {
			if err := validateName(s.Name, dirName); err != nil {
				return Skill{}, err
			}
		}
		s.Resources = findResources(filepath.Dir(path))
		if mcp, err := os.ReadFile(filepath.Join(filepath.Dir(path), ".mcp.json")); err == nil {
			if servers, err := mcpServers(mcp); err != nil {
				return Skill{}, fmt.Errorf(".mcp.json: %w", err)
			} else {
				s.MCPTools = servers
			}
		}
	}
	s.Normalize()
	return s, nil
}

func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// applyMeta copies frontmatter keys into s and infers the trigger: paths
// make a path rule, inputs a task, triggers keywords, none always-on.
func applyMeta(s *Skill, meta map[string]any) error {
	str := func(key string) (string, error) {
		v, ok := meta[key]
		if !ok || v == nil {
			return "", nil
		}
		switch v := v.(type) {
		case string:
			return v, nil
		case int, float64, bool:
			return fmt.Sprint(v), nil
		}
		return "", fmt.Errorf("%s must be text, not a %s", key, yamlKind(meta[key]))
	}
	var err error
	if v, ok := meta["name"]; ok && v != nil {
		s.Name = fmt.Sprint(v)
	}
	for key, dst := range map[string]*string{"description": &s.Description, "license": &s.License, "compatibility": &s.Compatibility} {
		if *dst, err = str(key); err != nil {
			return err
		}
	}
	if v, ok := meta["metadata"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("metadata must be a mapping")
		}
		s.Metadata = make(map[string]string, len(m))
		for k, val := range m {
			s.Metadata[k] = fmt.Sprint(val)
		}
	}
	tools, ok := meta["allowed-tools"]
	if !ok {
		tools = meta["allowed_tools"]
	}
	switch t := tools.(type) {
	case nil:
	case string:
		s.AllowedTools = strings.Fields(t)
	case []any:
		for _, e := range t {
			s.AllowedTools = append(s.AllowedTools, fmt.Sprint(e))
		}
	default:
		return errors.New("allowed-tools must be text or a list")
	}
	dmi, ok := meta["disable-model-invocation"]
	if !ok {
		dmi = meta["disable_model_invocation"]
	}
	if dmi != nil {
		b, ok := dmi.(bool)
		if !ok {
			return errors.New("disable-model-invocation must be true or false")
		}
		s.DisableModelInvocation = b
	}
	if v, ok := meta["mcp_tools"]; ok && v != nil && !s.IsAgentSkillsFormat {
		if _, ok := v.(map[string]any); !ok {
			return errors.New("mcp_tools must be a mapping")
		}
		if s.MCPTools, err = jsonOf(v); err != nil {
			return fmt.Errorf("mcp_tools: %w", err)
		}
	}

	var keywords []string
	if v, ok := meta["triggers"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return errors.New("triggers must be a list of strings")
		}
		for _, e := range list {
			keywords = append(keywords, fmt.Sprint(e))
		}
	}
	paths, err := parsePaths(meta["paths"])
	if err != nil {
		return err
	}
	_, hasInputs := meta["inputs"]
	switch {
	case len(paths) > 0:
		if len(keywords) > 0 || hasInputs {
			slog.Warn("skill: paths take precedence; triggers and inputs are ignored", "skill", s.Name, "source", s.Source)
		}
		s.Trigger = &Trigger{Type: TriggerPath, Paths: paths}
	case hasInputs:
		if !slices.Contains(keywords, "/"+s.Name) {
			keywords = append(keywords, "/"+s.Name)
		}
		list, ok := meta["inputs"].([]any)
		if !ok && meta["inputs"] != nil {
			return errors.New("inputs must be a list")
		}
		for i, e := range list {
			m, ok := e.(map[string]any)
			name, ok1 := m["name"].(string)
			desc, ok2 := m["description"].(string)
			if !ok || !ok1 || !ok2 {
				return fmt.Errorf("inputs[%d] needs a name and a description", i)
			}
			s.Inputs = append(s.Inputs, Input{Name: name, Description: desc})
		}
		s.Trigger = &Trigger{Type: TriggerTask, Words: keywords}
	case len(keywords) > 0:
		s.Trigger = &Trigger{Type: TriggerKeyword, Words: keywords}
	}
	return nil
}

// parsePaths reads paths as a list or a comma-separated string.
func parsePaths(v any) ([]string, error) {
	var raw []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		raw = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			raw = append(raw, fmt.Sprint(e))
		}
	default:
		return nil, errors.New("paths must be text or a list")
	}
	var out []string
	for _, p := range raw {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// validateName applies the AgentSkills naming rules.
func validateName(name, dir string) error {
	switch {
	case name == "":
		return errors.New("skill name is empty")
	case len(name) > 64:
		return fmt.Errorf("skill name %q is longer than 64 characters", name)
	case !skillName.MatchString(name):
		return fmt.Errorf("skill name %q must be lower-case letters and digits in words joined by single hyphens", name)
	case dir != "" && name != dir:
		return fmt.Errorf("skill name %q does not match its directory %q", name, dir)
	}
	return nil
}

// findResources lists scripts/, references/ and assets/ of a skill
// directory; nil when there are none.
func findResources(dir string) *Resources {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	r := &Resources{SkillRoot: filepath.ToSlash(abs), Scripts: []string{}, References: []string{}, Assets: []string{}}
	for name, dst := range map[string]*[]string{"scripts": &r.Scripts, "references": &r.References, "assets": &r.Assets} {
		root := filepath.Join(dir, name)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			*dst = append(*dst, filepath.ToSlash(rel))
			return nil
		})
		sort.Strings(*dst)
	}
	if len(r.Scripts)+len(r.References)+len(r.Assets) == 0 {
		return nil
	}
	return r
}

// LoadDir loads every skill of a skills folder: AgentSkills directories
// (<name>/SKILL.md) and the other *.md files at any depth (README.md and
// files inside AgentSkills directories excepted). Always-on skills come
// first, then triggered ones, then AgentSkills skills; on a name clash the
// first wins. Files that cannot be loaded are logged and returned as
// warnings. A folder that does not exist has no skills.
func LoadDir(dir string) ([]Skill, []Warning) { return loadDir(dir, "") }

// loadDir is LoadDir leaving out the directory skip (the installed skills,
// which are loaded apart).
func loadDir(dir, skip string) ([]Skill, []Warning) {
	var warns warnings
	warn := warns.add
	entries, ok := warns.readDir(dir)
	if !ok {
		return nil, warns
	}
	var repo, knowledge, agent []Skill
	skillDirs := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		md := findSkillMD(sub)
		if md == "" {
			continue
		}
		skillDirs[sub] = true
		if s, err := ParseFile(md, dir); err != nil {
			warn(md, err)
		} else {
			agent = append(agent, s)
		}
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			warn(p, err)
			return nil
		case d.IsDir() && (skillDirs[p] || (skip != "" && sameDir(p, skip))):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".md"):
			return nil
		case d.Name() == "README.md" || strings.EqualFold(d.Name(), "skill.md"):
			return nil
		}
		files = append(files, p)
		return nil
	})
	sort.Strings(files)
	for _, p := range files {
		s, err := ParseFile(p, dir)
		switch {
		case err != nil:
			warn(p, err)
		case s.Trigger == nil:
			repo = append(repo, s)
		default:
			knowledge = append(knowledge, s)
		}
	}
	var out []Skill
	seen := map[string]bool{}
	for _, s := range slices.Concat(repo, knowledge, agent) {
		if seen[s.Name] {
			slog.Warn("skill: duplicate name ignored", "skill", s.Name, "source", s.Source)
			continue
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, warns
}

// LoadPluginDir loads the skills folder of a plugin: the AgentSkills
// directories (<name>/SKILL.md) and the *.md files directly in dir (files
// deeper down are a skill's resources), README.md excepted, in the order
// of their paths. Names are not held to the AgentSkills rules. A path that
// leads outside root (by a symbolic link) is skipped. Two skills with one
// name are both returned, with a warning naming the second: the caller
// decides, as for skills of different plugins, that the later one wins.
func LoadPluginDir(dir, root string) ([]Skill, []Warning) {
	var warns warnings
	warn := warns.add
	entries, ok := warns.readDir(dir)
	if !ok {
		return nil, warns
	}
	var paths []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !Within(p, root) {
			continue
		}
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			if md := findSkillMD(p); md != "" && Within(md, root) {
				paths = append(paths, md)
			}
			continue
		}
		if strings.HasSuffix(e.Name(), ".md") && !strings.EqualFold(e.Name(), "README.md") {
			paths = append(paths, p)
		}
	}
	// By path components, as the reference orders them ("a/SKILL.md"
	// before "a.md").
	slices.SortFunc(paths, func(a, b string) int {
		return slices.Compare(strings.Split(filepath.ToSlash(a), "/"), strings.Split(filepath.ToSlash(b), "/"))
	})
	var out []Skill
	seen := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			warn(p, err)
			continue
		}
		s, err := parse(p, dir, data, false)
		if err != nil {
			warn(p, err)
			continue
		}
		if first, dup := seen[s.Name]; dup {
			warn(p, fmt.Errorf("skill name %q is also the name of %s; this one replaces it", s.Name, first))
		}
		seen[s.Name] = p
		out = append(out, s)
	}
	return out, warns
}

// ParsePluginFile reads a skill file of a plugin: ParseFile without the
// AgentSkills naming rules.
func ParsePluginFile(path, baseDir string) (Skill, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, err
	}
	return parse(path, baseDir, data, false)
}

// Within reports whether path, with its symbolic links resolved, lies in
// root (resolved too). A path that does not exist is judged by its
// lexical form.
func Within(path, root string) bool {
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(resolve(root), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func findSkillMD(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(e.Name(), "skill.md") {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// set accumulates skills, first name wins.
type set struct {
	skills []Skill
	seen   map[string]bool
	warns  []Warning
}

func (s *set) add(skills []Skill, warns []Warning) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.warns = append(s.warns, warns...)
	for _, sk := range skills {
		if s.seen[sk.Name] {
			continue
		}
		s.seen[sk.Name] = true
		s.skills = append(s.skills, sk)
	}
}

// ProjectDirs are the skills folders of a project, relative to its root,
// most important first (the last is the legacy microagents folder).
var ProjectDirs = []string{".agents/skills", ".openhands/skills", ".openhands/microagents"}

// LoadProject loads a workspace's skills, first wins on a name clash:
// the instruction files of other agents (AGENTS.md, CLAUDE.md, GEMINI.md,
// .cursorrules) of every directory from the git root down to workDir,
// merged (see instructionFiles), nested copies of those files below
// workDir as path rules (server/AGENTS.md is "agents:server" for
// server/**), then the ProjectDirs of workDir and of the git root.
func LoadProject(workDir string) ([]Skill, []Warning) {
	roots := []string{workDir}
	if git := gitRoot(workDir); git != "" && git != filepath.Clean(workDir) {
		roots = append(roots, git)
	}
	var all set
	all.add(instructionFiles(workDir, roots[len(roots)-1]))
	all.add(nestedRules(workDir))
	for _, root := range roots {
		for _, d := range ProjectDirs {
			all.add(LoadDir(filepath.Join(root, filepath.FromSlash(d))))
		}
	}
	return all.skills, all.warns
}

// UserDirs are the skills folders of a user, relative to the home
// directory, most important first.
var UserDirs = []string{".agents/skills", ".openhands/skills", ".openhands/microagents"}

// LoadUser loads the skills of the user whose home directory is home
// (os.UserHomeDir() usually), first wins on a name clash.
func LoadUser(home string) ([]Skill, []Warning) {
	var all set
	installed := InstalledDir(PersistenceDir(home))
	for _, d := range UserDirs {
		all.add(loadDir(filepath.Join(home, filepath.FromSlash(d)), installed))
	}
	all.add(LoadInstalled(installed))
	return all.skills, all.warns
}

// InstalledDir is where installed skills are kept for a user whose
// OpenHands directory is persistDir: <name>/SKILL.md each, and
// .installed.json recording their source and whether they are enabled.
func InstalledDir(persistDir string) string {
	return filepath.Join(persistDir, "skills", "installed")
}

// LoadInstalled loads the enabled installed skills of dir, by directory
// name: those .installed.json does not say are disabled.
func LoadInstalled(dir string) ([]Skill, []Warning) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var meta map[string]map[string]struct {
		Enabled *bool `json:"enabled"`
	}
	var warns []Warning
	if data, err := os.ReadFile(filepath.Join(dir, ".installed.json")); err == nil {
		if err := json.Unmarshal(data, &meta); err != nil {
			warns = append(warns, Warning{Path: filepath.Join(dir, ".installed.json"), Err: err})
		}
	}
	disabled := func(name string) bool {
		for _, k := range []string{"extensions", "skills"} {
			if e, ok := meta[k][name]; ok && e.Enabled != nil {
				return !*e.Enabled
			}
		}
		return false
	}
	var out []Skill
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || disabled(e.Name()) {
			continue
		}
		md := findSkillMD(filepath.Join(dir, e.Name()))
		if md == "" {
			continue
		}
		s, err := ParseFile(md, "")
		if err != nil {
			warns = append(warns, Warning{Path: md, Err: err})
			continue
		}
		out = append(out, s)
	}
	return out, warns
}

// sameDir reports whether a and b name one existing directory.
func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// Merge combines skill lists, earlier lists winning on a name clash, and
// drops the disabled names.
func Merge(disabled []string, lists ...[]Skill) []Skill {
	var all set
	for _, l := range lists {
		all.add(l, nil)
	}
	return slices.DeleteFunc(all.skills, func(s Skill) bool { return slices.Contains(disabled, s.Name) })
}

// gitRoot returns the nearest directory at or above dir holding .git.
func gitRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// instructionFiles loads the other agents' instruction files of each
// directory from top (the git root, or workDir itself) down to workDir.
// Files of one name at several levels are one skill, their contents joined
// from the top down, as Codex reads AGENTS.md: the nearer file comes last
// and a sub-directory's file adds to the root's instead of hiding it.
func instructionFiles(workDir, top string) ([]Skill, []Warning) {
	dirs := []string{filepath.Clean(workDir)}
	for d := dirs[0]; d != filepath.Clean(top); {
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
		dirs = append(dirs, d)
	}
	slices.Reverse(dirs)
	var out []Skill
	var warns []Warning
	at := map[string]int{}
	for _, d := range dirs {
		skills, w := thirdPartyFiles(d)
		warns = append(warns, w...)
		for _, s := range skills {
			i, ok := at[s.Name]
			if !ok {
				at[s.Name] = len(out)
				out = append(out, s)
				continue
			}
			out[i].Content = strings.TrimRight(out[i].Content, "\n") + "\n\n" + s.Content
			out[i].Source = s.Source
		}
	}
	return out, warns
}

// thirdPartyFiles loads the other agents' instruction files at the top of
// root. A symlink to a file already loaded (CLAUDE.md -> AGENTS.md) is
// skipped.
func thirdPartyFiles(root string) ([]Skill, []Warning) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	var out []Skill
	var warns []Warning
	seenReal := map[string]bool{}
	seenName := map[string]bool{}
	for _, e := range entries {
		lower := strings.ToLower(e.Name())
		if _, ok := thirdPartyNames[lower]; !ok || seenName[lower] {
			continue
		}
		p := filepath.Join(root, e.Name())
		info, err := os.Stat(p)
		if err != nil || info.IsDir() {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err == nil && seenReal[real] {
			continue
		}
		s, err := ParseFile(p, "")
		if err != nil {
			slog.Warn("skill: file not loaded", "path", p, "err", err)
			warns = append(warns, Warning{Path: p, Err: err})
			continue
		}
		seenReal[real] = true
		seenName[lower] = true
		out = append(out, s)
	}
	return out, warns
}

// skipDirs are not searched for nested instruction files.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".venv": true, "venv": true, "vendor": true, "__pycache__": true}

// nestedRules turns instruction files below the top of workDir into path
// rules scoped to their directory.
func nestedRules(workDir string) ([]Skill, []Warning) {
	var out []Skill
	var warns []Warning
	_ = filepath.WalkDir(workDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != workDir && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		name, ok := thirdPartyNames[strings.ToLower(d.Name())]
		if !ok || filepath.Dir(p) == filepath.Clean(workDir) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			warns = append(warns, Warning{Path: p, Err: err})
			return nil
		}
		rel, _ := filepath.Rel(workDir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		s := Skill{Name: name + ":" + rel, Content: string(data), Source: filepath.ToSlash(p),
			Trigger: &Trigger{Type: TriggerPath, Paths: []string{rel + "/**"}}}
		s.Normalize()
		out = append(out, s)
		return nil
	})
	return out, warns
}

// jsonOf encodes a decoded YAML value as JSON.
func jsonOf(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

// mcpServers returns the "mcpServers" object of a .mcp.json file.
func mcpServers(data []byte) (json.RawMessage, error) {
	var f struct {
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if len(f.MCPServers) == 0 || string(f.MCPServers) == "null" {
		return json.RawMessage("{}"), nil
	}
	return f.MCPServers, nil
}

// LoadSkills adds the skills the context asks for to its explicit ones:
// with LoadUserSkills, the user's (home is the user's home directory); with
// LoadProjectSkills, the workspace's (workDir). Precedence on a name clash,
// as in the reference: project skills, then explicit ones, then the user's.
// DisabledSkills are dropped last. Empty workDir or home skip that source.
// With LoadPublicSkills, PublicSkills (fetched by the caller) come after
// the user's.
func (c *AgentContext) LoadSkills(workDir, home string) []Warning {
	var warns []Warning
	skills := c.Skills
	if c.LoadUserSkills && home != "" {
		user, w := LoadUser(home)
		warns = append(warns, w...)
		skills = Merge(nil, skills, user)
	}
	if c.LoadPublicSkills {
		skills = Merge(nil, skills, c.PublicSkills)
	}
	if c.LoadProjectSkills && workDir != "" {
		project, w := LoadProject(workDir)
		warns = append(warns, w...)
		skills = Merge(nil, project, skills)
	}
	c.Skills = Merge(c.DisabledSkills, skills)
	return warns
}

// GitRoot returns the nearest directory at or above dir holding .git, or
// "".
func GitRoot(dir string) string { return gitRoot(dir) }

// warnings collects the files a load left out, logging each.
type warnings []Warning

func (w *warnings) add(path string, err error) {
	slog.Warn("skill: file not loaded", "path", path, "err", err)
	*w = append(*w, Warning{Path: path, Err: err})
}

// readDir lists dir; ok is false when it cannot be listed. A folder that
// does not exist has nothing to load and is no warning.
func (w *warnings) readDir(dir string) (entries []os.DirEntry, ok bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.add(dir, err)
		}
		return nil, false
	}
	return entries, true
}
