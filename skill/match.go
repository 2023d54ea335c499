package skill

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// MatchKeyword returns the first of the skill's keywords (keyword and task
// triggers) found in text, and whether there was one. Matching ignores case
// and wants whole tokens: the keyword must not touch an ASCII letter or
// digit on either side, so "git" does not fire on "github" but "/deploy"
// fires on "please /deploy now".
func (s *Skill) MatchKeyword(text string) (string, bool) {
	lower := strings.ToLower(text)
	for _, k := range s.Keywords() {
		if containsToken(lower, strings.ToLower(k)) {
			return k, true
		}
	}
	return "", false
}

func containsToken(text, word string) bool {
	if word == "" {
		return false
	}
	for from := 0; from <= len(text)-len(word); {
		i := strings.Index(text[from:], word)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(word)
		if (i == 0 || !isAlnum(text[i-1])) && (end == len(text) || !isAlnum(text[end])) {
			return true
		}
		from = i + 1
	}
	return false
}

func isAlnum(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// MatchPath returns the first path glob of a path rule that matches rel, a
// slash-separated path relative to the workspace, and whether one did.
// Globs follow gitignore: ** spans directories, a glob without a slash
// matches the base name at any depth, a trailing slash matches everything
// below a directory; matching is case-sensitive.
func (s *Skill) MatchPath(rel string) (string, bool) {
	if s.Trigger == nil || s.Trigger.Type != TriggerPath {
		return "", false
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	for _, g := range s.Trigger.Paths {
		if globMatch(g, rel) {
			return g, true
		}
	}
	return "", false
}

func globMatch(glob, rel string) bool {
	g := strings.TrimPrefix(glob, "/")
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	if !strings.Contains(strings.TrimSuffix(glob, "/"), "/") {
		g = "**/" + g
	}
	ok, err := doublestar.Match(g, rel)
	return err == nil && ok
}

// Activation is a triggered skill: what fired it and its content.
type Activation struct {
	Skill *Skill
	// Trigger is the keyword or path glob that matched.
	Trigger string
}

// Triggered returns the skills fired by a user message's text, in skill
// order, leaving out those named in activated: each skill fires at most
// once per conversation.
func Triggered(skills []Skill, text string, activated []string) []Activation {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []Activation
	for i := range skills {
		s := &skills[i]
		if slices.Contains(activated, s.Name) {
			continue
		}
		if k, ok := s.MatchKeyword(text); ok {
			out = append(out, Activation{Skill: s, Trigger: k})
		}
	}
	return out
}

// TriggeredByPath returns the path rules fired by a tool touching rel (a
// workspace-relative path), leaving out those named in activated.
func TriggeredByPath(skills []Skill, rel string, activated []string) []Activation {
	var out []Activation
	for i := range skills {
		s := &skills[i]
		if slices.Contains(activated, s.Name) {
			continue
		}
		if g, ok := s.MatchPath(rel); ok {
			out = append(out, Activation{Skill: s, Trigger: g})
		}
	}
	return out
}

// Names returns the names of activated skills, to record in the message's
// activated_skills and to pass back as activated next time.
func Names(acts []Activation) []string {
	if len(acts) == 0 {
		return nil
	}
	names := make([]string, len(acts))
	for i, a := range acts {
		names[i] = a.Skill.Name
	}
	return names
}

// RelPath turns the path argument of a tool action into the
// workspace-relative, slash-separated form path rules match against. It
// reports false for paths outside workDir, which no rule matches.
func RelPath(workDir, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workDir, p)
	}
	rel, err := filepath.Rel(workDir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
