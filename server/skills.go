package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// POST /api/skills merges the skills of five tiers, as 1.58.2 does, a
// later tier replacing a skill of an earlier one with its name where it
// stood (so the list keeps the order names first appeared in):
//
//  1. sandbox: a "work_hosts" skill listing the sandbox's exposed URLs
//     named WORKER_*;
//  2. registered_marketplaces: what the server's
//     (Options.RegisteredMarketplaces) and the request's marketplace
//     registrations auto-load (with load_public), standalone skills
//     first, then plugins;
//  3. sdk_base: the public repository's skills (load_public; those the
//     marketplace_path file lists, or all of them when it is null), then
//     the user's (load_user, installed skills included), the user's
//     winning;
//  4. org: the skills/ and microagents/ of each org_configs repository
//     (load_org), cloned into a temporary directory removed afterwards,
//     a later repository winning;
//  5. project: the skills of project_dir (load_project).
//
// A source that cannot be reached (or does not answer within the fetch
// timeout, see plugin.FetchTimeoutEnv) is logged, with its URL stripped
// of credentials, and counts no skills; the answer is still 200, as the
// reference's.

// skillsRequest is the body of POST /api/skills: which sources to load
// (each true when left out).
type skillsRequest struct {
	LoadPublic  *bool `json:"load_public"`
	LoadUser    *bool `json:"load_user"`
	LoadProject *bool `json:"load_project"`
	LoadOrg     *bool `json:"load_org"`
	// MarketplacePath is the public repository's marketplace file
	// (skill.DefaultMarketplacePath when left out); null loads every
	// public skill.
	MarketplacePath        json.RawMessage       `json:"marketplace_path"`
	RegisteredMarketplaces []plugin.Registration `json:"registered_marketplaces"`
	ProjectDir             *string               `json:"project_dir"`
	OrgConfigs             []orgConfig           `json:"org_configs"`
	SandboxConfig          *skillsSandboxConfig  `json:"sandbox_config"`
}

// orgConfig is an organisation's skills repository. OrgRepoURL may hold
// credentials: it is never logged as given.
type orgConfig struct {
	Repository string `json:"repository"`
	Provider   string `json:"provider"`
	OrgRepoURL string `json:"org_repo_url"`
	OrgName    string `json:"org_name"`
}

type skillsSandboxConfig struct {
	ExposedURLs []exposedURL `json:"exposed_urls"`
}

type exposedURL struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Port int    `json:"port"`
}

// skillInfo is a skill as the reference lists it.
type skillInfo struct {
	Name                   string   `json:"name"`
	Type                   string   `json:"type"`
	Content                string   `json:"content"`
	Triggers               []string `json:"triggers"`
	Source                 *string  `json:"source"`
	Description            *string  `json:"description"`
	IsAgentSkillsFormat    bool     `json:"is_agentskills_format"`
	DisableModelInvocation bool     `json:"disable_model_invocation"`
}

type skillsResponse struct {
	Skills []skillInfo `json:"skills"`
	// Sources counts the skills of each tier, by the reference's names.
	Sources map[string]int `json:"sources"`
}

func (s *Server) skillRoutes() []*route {
	return []*route{
		{method: "POST", path: "/api/skills", summary: "The skills of the sandbox, registered marketplaces, public repository, user, organisations and project, merged (a later source wins on a name clash)", tag: "Skills", body: skillsRequest{}, resp: skillsResponse{}, errors: []int{422}, h: handle(s, nil, s.handleSkills)},
	}
}

func (s *Server) handleSkills(in *request[none, skillsRequest]) (any, error) {
	ctx := in.r.Context()
	b := &in.body
	on := func(b *bool) bool { return b == nil || *b }
	mpath := skill.DefaultMarketplacePath
	if raw := strings.TrimSpace(string(b.MarketplacePath)); raw == "null" {
		mpath = plugin.AllPublicSkills
	} else if raw != "" {
		if err := json.Unmarshal(b.MarketplacePath, &mpath); err != nil {
			return nil, invalid("marketplace_path: a string or null", "body", "marketplace_path")
		}
	}
	for i := range b.RegisteredMarketplaces {
		r := &b.RegisteredMarketplaces[i]
		src := plugin.Source{Source: r.Source, RepoPath: r.RepoPath}
		if err := src.Validate(); err != nil {
			return nil, invalid(err.Error(), "body", "registered_marketplaces", i)
		}
	}
	regs := mergeRegistrations(s.opts.RegisteredMarketplaces, b.RegisteredMarketplaces)
	warn := func(msg string, ws []skill.Warning) {
		for _, w := range ws {
			s.log.Warn(msg, "source", w.Path, "err", w.Err)
		}
	}
	tiers := []struct {
		name   string
		skills []skill.Skill
	}{{name: "sandbox"}, {name: "registered_marketplaces"}, {name: "sdk_base"}, {name: "org"}, {name: "project"}}
	if b.SandboxConfig != nil {
		if sk, ok := workHosts(b.SandboxConfig.ExposedURLs); ok {
			tiers[0].skills = []skill.Skill{sk}
		}
	}
	if on(b.LoadPublic) {
		var auto []plugin.Registration
		for _, r := range regs {
			if r.AutoLoadsAny() {
				auto = append(auto, r)
			}
		}
		if len(auto) > 0 {
			set, ws := plugin.LoadRegistered(ctx, auto, s.fetchOptions())
			warn("skills: a registered marketplace cannot be loaded", ws)
			tiers[1].skills = set.Skills
		}
		public, err := plugin.LoadPublicSkills(ctx, mpath, s.fetchOptions())
		if err != nil {
			s.log.Warn("skills: the public skills cannot be loaded", "err", err)
		}
		tiers[2].skills = public
	}
	if on(b.LoadUser) {
		if home, err := os.UserHomeDir(); err == nil {
			user, ws := skill.LoadUser(home)
			warn("skills: a user skill cannot be loaded", ws)
			tiers[2].skills = plugin.MergeSkills(tiers[2].skills, user)
		}
	}
	if on(b.LoadOrg) {
		for _, c := range b.OrgConfigs {
			org, err := s.orgSkills(ctx, c.OrgRepoURL)
			if err != nil {
				s.log.Warn("skills: the organisation's skills cannot be loaded", "org", c.OrgName, "err", err)
				continue
			}
			tiers[3].skills = plugin.MergeSkills(tiers[3].skills, org)
		}
	}
	if on(b.LoadProject) && b.ProjectDir != nil && *b.ProjectDir != "" {
		project, ws := skill.LoadProject(*b.ProjectDir)
		warn("skills: a project skill cannot be loaded", ws)
		tiers[4].skills = project
	}
	out := skillsResponse{Skills: []skillInfo{}, Sources: map[string]int{}}
	var all []skill.Skill
	for _, t := range tiers {
		out.Sources[t.name] = len(t.skills)
		all = plugin.MergeSkills(all, t.skills)
	}
	for _, sk := range all {
		out.Skills = append(out.Skills, skillInfoOf(sk))
	}
	return out, nil
}

// mergeRegistrations is the server's registrations with the request's,
// one of a name replacing the server's where it stood.
func mergeRegistrations(server, req []plugin.Registration) []plugin.Registration {
	out := slices.Clone(server)
	for _, r := range req {
		if i := slices.IndexFunc(out, func(o plugin.Registration) bool { return o.Name == r.Name }); i >= 0 {
			out[i] = r
		} else {
			out = append(out, r)
		}
	}
	return out
}

// orgSkills clones an organisation's skills repository into a temporary
// directory, removed afterwards, and loads its skills/ and, for the names
// those lack, its microagents/.
func (s *Server) orgSkills(ctx context.Context, url string) ([]skill.Skill, error) {
	tmp, err := os.MkdirTemp("", "gohands-org-skills-")
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir, _, err := plugin.Fetch(ctx, plugin.Source{Source: url}, &plugin.FetchOptions{CacheDir: tmp})
	if err != nil {
		return nil, err
	}
	var lists [][]skill.Skill
	for _, sub := range []string{"skills", "microagents"} {
		l, ws := skill.LoadDir(filepath.Join(dir, sub))
		for _, w := range ws {
			s.log.Warn("skills: an organisation skill cannot be loaded", "path", w.Path, "err", w.Err)
		}
		lists = append(lists, l)
	}
	return skill.Merge(nil, lists...), nil
}

// workHosts is the skill telling the agent the sandbox's web
// applications: the exposed URLs whose names start with WORKER_.
func workHosts(urls []exposedURL) (skill.Skill, bool) {
	var sb strings.Builder
	for _, u := range urls {
		if strings.HasPrefix(u.Name, "WORKER_") {
			fmt.Fprintf(&sb, "\n* %s (port %d)", u.URL, u.Port)
		}
	}
	if sb.Len() == 0 {
		return skill.Skill{}, false
	}
	return skill.Skill{Name: "work_hosts", Content: "The user can reach the web applications of the sandbox at these hosts, each on its port:" + sb.String()}, true
}

// skillInfoOf describes a skill as the reference lists it.
func skillInfoOf(sk skill.Skill) skillInfo {
	info := skillInfo{
		Name: sk.Name, Type: "knowledge", Content: sk.Content, Triggers: sk.Keywords(),
		IsAgentSkillsFormat: sk.IsAgentSkillsFormat, DisableModelInvocation: sk.DisableModelInvocation,
	}
	switch {
	case sk.IsAgentSkillsFormat:
		info.Type = "agentskills"
	case sk.Trigger == nil:
		info.Type = "repo"
	}
	if info.Triggers == nil {
		info.Triggers = []string{}
	}
	if sk.Source != "" {
		info.Source = &sk.Source
	}
	if sk.Description != "" {
		info.Description = &sk.Description
	}
	return info
}
