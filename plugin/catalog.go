package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/skill"
)

// The public catalog: what the agent server's /api/skills/catalog and
// /api/skills/marketplace list and `gohands skills catalog` prints.

// CatalogSkill is a skill a conversation can load, and whether it is the
// user's (else the public repository's).
type CatalogSkill struct {
	skill.Skill
	User bool
}

// Catalog lists the skills a conversation can load: the user's (under
// home, the enabled installed skills among them, as 1.58.2's origin
// "user" counts "marketplace installs") and the public repository's
// default marketplace, a user skill shadowing a public one of its name. A public repository that cannot be
// reached is the error, returned with the user's skills.
func Catalog(ctx context.Context, home string, opts *FetchOptions) ([]CatalogSkill, []skill.Warning, error) {
	var user []skill.Skill
	var warns []skill.Warning
	if home != "" {
		user, warns = skill.LoadUser(home)
	}
	public, err := LoadPublicSkills(ctx, "", opts)
	isUser := map[string]bool{}
	for _, sk := range user {
		isUser[sk.Name] = true
	}
	var out []CatalogSkill
	for _, sk := range skill.Merge(nil, user, public) {
		out = append(out, CatalogSkill{Skill: sk, User: isUser[sk.Name]})
	}
	return out, warns, err
}

// PublicMarketplace reads the marketplace of the public repository in
// dir: its manifest (.plugin/marketplace.json), else the file at
// skill.DefaultMarketplacePath. needFile asks for the latter to exist, as
// the reference's skill marketplace does. nil and no error when there is
// none. A manifest that cannot be read gives way to the file.
func PublicMarketplace(dir string, needFile bool) (*Marketplace, error) {
	file := filepath.Join(dir, filepath.FromSlash(skill.DefaultMarketplacePath))
	if _, err := os.Stat(file); needFile && err != nil {
		return nil, nil
	}
	var manifestErr error
	for _, d := range ManifestDirs {
		if _, err := os.Stat(filepath.Join(dir, d, MarketplaceFile)); err == nil {
			m, err := LoadMarketplace(dir, "")
			if err == nil {
				return m, nil
			}
			manifestErr = err // the file may still do
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, manifestErr
	}
	var m Marketplace
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("marketplace %s: %w", file, err)
	}
	m.Path = dir
	return &m, nil
}

// MarketplaceSkill is a skill a marketplace offers, with its source as
// the install commands and routes take it.
type MarketplaceSkill struct {
	Name        string
	Description *string
	Source      string
}

// InstallableSkills lists the skills of m: its plugins' entries, then its
// standalone skills', the first of each name; an entry that does not
// resolve (outside the marketplace, say) is left out.
func (m *Marketplace) InstallableSkills() []MarketplaceSkill {
	var out []MarketplaceSkill
	seen := map[string]bool{}
	for i := range m.Plugins {
		e := &m.Plugins[i]
		src, err := m.Resolve(e)
		if err != nil || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		out = append(out, MarketplaceSkill{Name: e.Name, Description: e.Description, Source: sourceString(src)})
	}
	for _, e := range m.Skills {
		var raw string
		if seen[e.Name] || json.Unmarshal(e.Source, &raw) != nil {
			continue
		}
		seen[e.Name] = true
		out = append(out, MarketplaceSkill{Name: e.Name, Description: e.Description, Source: raw})
	}
	return out
}

// sourceString writes a source as one string: SOURCE[@REF][/REPO_PATH].
func sourceString(s Source) string {
	out := s.Source
	if s.Ref != nil && *s.Ref != "" {
		out += "@" + *s.Ref
	}
	if s.RepoPath != nil && *s.RepoPath != "" {
		out += "/" + *s.RepoPath
	}
	return out
}
