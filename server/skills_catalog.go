package server

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/plugin"
)

// The public catalog routes: the skills a profile's launch can load
// (/api/skills/catalog), the marketplace of the public extensions
// repository for skills (/api/skills/marketplace) and for plugins
// (/api/plugins/marketplace), and a forced refresh of that repository
// (/api/skills/sync). The repository is the one plugin.PublicRepo
// fetches ($EXTENSIONS_PATH, $EXTENSIONS_REPO); one that cannot be
// reached gives empty catalogs, as the reference's do offline.

// publicCatalogTTL is how long the public repository's directory is
// reused before its remote is asked again, as the reference caches its
// catalogs.
const publicCatalogTTL = 5 * time.Minute

// publicRepoCache keeps the public repository's directory.
type publicRepoCache struct {
	mu  sync.Mutex
	dir string
	at  time.Time
}

// publicRepo returns the directory of the public extensions repository,
// fetched at most every publicCatalogTTL; "" when it cannot be reached.
func (s *Server) publicRepo(ctx context.Context, force bool) (string, error) {
	c := &s.publicRepoCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if !force && c.dir != "" && time.Since(c.at) < publicCatalogTTL {
		return c.dir, nil
	}
	dir, err := plugin.PublicRepo(ctx, nil)
	if err != nil {
		c.dir = ""
		return "", err
	}
	c.dir, c.at = dir, time.Now()
	return dir, nil
}

type skillCatalogEntry struct {
	skillInfo
	Origin string `json:"origin" enum:"public,user"`
}

type skillCatalogResponse struct {
	Skills []skillCatalogEntry `json:"skills"`
}

type syncResponse struct {
	Status  string `json:"status" enum:"success,error"`
	Message string `json:"message"`
}

type marketplaceSkill struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Source      string  `json:"source"`
	Installed   bool    `json:"installed"`
}

type skillMarketplaceResponse struct {
	Skills []marketplaceSkill `json:"skills"`
}

type marketplacePlugin struct {
	Name        string               `json:"name"`
	Description *string              `json:"description"`
	Source      string               `json:"source"`
	Ref         *string              `json:"ref"`
	RepoPath    *string              `json:"repo_path"`
	Installed   bool                 `json:"installed"`
	Path        *string              `json:"path"`
	Skills      []pluginSkillSummary `json:"skills"`
	Files       []string             `json:"files"`
}

type pluginMarketplaceResponse struct {
	Plugins []marketplacePlugin `json:"plugins"`
}

func (s *Server) publicCatalogRoutes() []*route {
	return []*route{
		{method: "GET", path: "/api/skills/catalog", summary: "The skills a profile's launch can load: the user's and the public repository's", tag: "Skills", resp: skillCatalogResponse{}, h: handle(s, nil, s.handleSkillCatalog)},
		{method: "POST", path: "/api/skills/sync", summary: "Fetch the public extensions repository again", tag: "Skills", resp: syncResponse{}, h: handle(s, nil, s.handleSkillSync)},
		{method: "GET", path: "/api/skills/marketplace", summary: "The skills of the public repository's marketplace, with whether each is installed", tag: "Skills", resp: skillMarketplaceResponse{}, h: handle(s, nil, s.handleSkillMarketplace)},
		{method: "GET", path: "/api/plugins/marketplace", summary: "The plugins of the public repository's marketplace (sources under plugins/), with whether each is installed", tag: "Plugins", resp: pluginMarketplaceResponse{}, h: handle(s, nil, s.handlePluginMarketplace)},
	}
}

func (s *Server) handleSkillCatalog(in *request[none, none]) (any, error) {
	home, _ := os.UserHomeDir()
	list, warns, err := plugin.Catalog(in.r.Context(), home, nil)
	for _, w := range warns {
		s.log.Warn("skills: a skill cannot be loaded", "err", w.Error())
	}
	if err != nil {
		s.log.Warn("skills: the public skills cannot be loaded", "err", err)
	}
	out := skillCatalogResponse{Skills: []skillCatalogEntry{}}
	for _, sk := range list {
		origin := "public"
		if sk.User {
			origin = "user" // a user skill shadows a public one of its name
		}
		out.Skills = append(out.Skills, skillCatalogEntry{skillInfoOf(sk.Skill), origin})
	}
	return out, nil
}

func (s *Server) handleSkillSync(in *request[none, none]) (any, error) {
	plugin.ForgetPublicSkills()
	if _, err := s.publicRepo(in.r.Context(), true); err != nil {
		s.log.Warn("skills: the public repository cannot be synced", "err", err)
		return syncResponse{Status: "error", Message: "Failed to sync skills repository"}, nil
	}
	return syncResponse{Status: "success", Message: "Skills repository synced successfully"}, nil
}

// publicMarketplace reads the marketplace of the public repository
// (plugin.PublicMarketplace); nil when there is none or it cannot be
// reached or read.
func (s *Server) publicMarketplace(ctx context.Context, needFile bool) *plugin.Marketplace {
	dir, err := s.publicRepo(ctx, false)
	if err != nil {
		s.log.Warn("marketplace: the public repository cannot be reached", "err", err)
		return nil
	}
	m, err := plugin.PublicMarketplace(dir, needFile)
	if err != nil {
		s.log.Warn("marketplace: the public marketplace cannot be read", "err", err)
		return nil
	}
	return m
}

// installedNames are the names of the installed entries of a store.
func installedNames(st *plugin.Store) map[string]bool {
	out := map[string]bool{}
	list, err := st.List()
	if err != nil {
		return out
	}
	for _, i := range list {
		out[i.Name] = true
	}
	return out
}

func (s *Server) handleSkillMarketplace(in *request[none, none]) (any, error) {
	out := skillMarketplaceResponse{Skills: []marketplaceSkill{}}
	m := s.publicMarketplace(in.r.Context(), true)
	if m == nil {
		return out, nil
	}
	installed := installedNames(skillStore())
	for _, e := range m.InstallableSkills() {
		out.Skills = append(out.Skills, marketplaceSkill{Name: e.Name, Description: e.Description, Source: e.Source, Installed: installed[e.Name]})
	}
	return out, nil
}

// truePlugin reports whether a marketplace entry's source (as written)
// is a plugin of the repository's plugins/ rather than a skill.
func truePlugin(raw json.RawMessage) bool {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return strings.HasPrefix(str, "./plugins/")
	}
	var obj plugin.MarketplaceSource
	return json.Unmarshal(raw, &obj) == nil && obj.Path != nil && strings.HasPrefix(*obj.Path, "plugins/")
}

func (s *Server) handlePluginMarketplace(in *request[none, none]) (any, error) {
	out := pluginMarketplaceResponse{Plugins: []marketplacePlugin{}}
	m := s.publicMarketplace(in.r.Context(), false)
	if m == nil {
		return out, nil
	}
	installed := installedNames(pluginStore())
	for i := range m.Plugins {
		e := &m.Plugins[i]
		if !truePlugin(e.Source) {
			continue
		}
		src, err := m.Resolve(e)
		if err != nil {
			continue
		}
		mp := marketplacePlugin{Name: e.Name, Description: e.Description, Source: src.Source, Ref: src.Ref, RepoPath: src.RepoPath, Installed: installed[e.Name]}
		// A plugin of the clone itself can be described from disk; one
		// elsewhere cannot without fetching it.
		if info, err := os.Stat(src.Source); err == nil && info.IsDir() && src.Ref == nil && src.RepoPath == nil {
			if p, err := plugin.Load(src.Source); err == nil {
				path := filepath.ToSlash(src.Source)
				mp.Path = &path
				mp.Skills, mp.Files = pluginContents(p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn("marketplace: a plugin cannot be loaded", "plugin", e.Name, "err", err)
			}
		}
		out.Plugins = append(out.Plugins, mp)
	}
	return out, nil
}
