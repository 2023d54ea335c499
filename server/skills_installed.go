package server

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"regexp"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// skillStore is the user's installed skills
// (~/.openhands/skills/installed, or under $OH_PERSISTENCE_DIR), which the
// agents load with the user's skills, as in the reference.
func skillStore() *plugin.Store {
	home, _ := os.UserHomeDir()
	return &plugin.Store{Dir: skill.InstalledDir(skill.PersistenceDir(home)), Load: plugin.SkillLoader}
}

type skillNamePath struct {
	SkillName string `path:"skill_name" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$"`
}

type installSkillRequest struct {
	Source   string  `json:"source" required:"true"`
	Ref      *string `json:"ref"`
	RepoPath *string `json:"repo_path"`
	Force    bool    `json:"force"`
}

type installedSkill struct {
	Name        string  `json:"name"`
	Version     string  `json:"version"`
	Description string  `json:"description"`
	Enabled     bool    `json:"enabled"`
	Source      string  `json:"source"`
	ResolvedRef *string `json:"resolved_ref"`
	RepoPath    *string `json:"repo_path"`
	InstalledAt string  `json:"installed_at"`
	InstallPath string  `json:"install_path"`
}

type installedSkillsResponse struct {
	Skills []installedSkill `json:"skills"`
}

func installedSkillOf(i plugin.Info) installedSkill {
	return installedSkill{Name: i.Name, Version: i.Version, Description: i.Description, Enabled: i.Enabled, Source: i.Source,
		ResolvedRef: i.ResolvedRef, RepoPath: i.RepoPath, InstalledAt: i.InstalledAt, InstallPath: i.InstallPath}
}

func (s *Server) installedSkillRoutes() []*route {
	const (
		ts   = "Skills"
		inst = "/api/skills/installed/{skill_name}"
	)
	return []*route{
		{method: "POST", path: "/api/skills/install", summary: "Install a skill (a directory with a SKILL.md) from a git URL, github:owner/repo or a local path", tag: ts, body: installSkillRequest{}, resp: installedSkill{}, errors: []int{400, 409, 422}, h: handle(s, nil, s.handleInstallSkill)},
		{method: "GET", path: "/api/skills/installed", summary: "The installed skills, enabled or not", tag: ts, resp: installedSkillsResponse{}, h: handle(s, nil, s.handleInstalledSkills)},
		{method: "GET", path: inst, summary: "One installed skill", tag: ts, query: &skillNamePath{}, resp: installedSkill{}, errors: []int{404, 422}, h: handle(s, nil, s.handleInstalledSkill)},
		{method: "PATCH", path: inst, summary: "Enable or disable an installed skill", tag: ts, query: &skillNamePath{}, body: pluginStateRequest{}, resp: pluginStateResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleSkillState)},
		{method: "DELETE", path: inst, summary: "Uninstall a skill", tag: ts, query: &skillNamePath{}, resp: messageResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleUninstallSkill)},
	}
}

var skillNameRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

func skillName(r *http.Request) (string, error) {
	name := r.PathValue("skill_name")
	if len(name) > 255 || !skillNameRE.MatchString(name) {
		return "", &invalidError{loc: []any{"path", "skill_name"}, typ: "string_pattern_mismatch", msg: "String should match pattern '" + skillNameRE.String() + "'"}
	}
	return name, nil
}

func (s *Server) handleInstallSkill(in *request[none, installSkillRequest]) (any, error) {
	src := plugin.Source{Source: in.body.Source, Ref: in.body.Ref, RepoPath: in.body.RepoPath}
	if src.Source == "" {
		return nil, &invalidError{loc: []any{"body", "source"}, typ: "missing", msg: "Field required"}
	}
	if err := src.Validate(); err != nil {
		return nil, invalid(err.Error(), "body", "repo_path")
	}
	dir, commit, err := plugin.Fetch(in.r.Context(), src, s.fetchOptions())
	if err != nil {
		s.log.Warn("skills: install: fetch failed", "err", err)
		return nil, statusErr(http.StatusBadRequest, "Failed to fetch skill source: %s", err.Error())
	}
	info, err := skillStore().Install(dir, src, commit, in.body.Force)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, statusErr(http.StatusConflict, "Skill already installed. Use force=true to overwrite.")
	case err != nil:
		return nil, statusErr(http.StatusUnprocessableEntity, "Invalid skill: %s", err.Error())
	}
	return installedSkillOf(info), nil
}

func (s *Server) handleInstalledSkills(in *request[none, none]) (any, error) {
	list, err := skillStore().List()
	if err != nil {
		return nil, err
	}
	out := installedSkillsResponse{Skills: []installedSkill{}}
	for _, i := range list {
		out.Skills = append(out.Skills, installedSkillOf(i))
	}
	return out, nil
}

func (s *Server) handleInstalledSkill(in *request[skillNamePath, none]) (any, error) {
	name, err := skillName(in.r)
	if err != nil {
		return nil, err
	}
	list, err := skillStore().List()
	if err != nil {
		return nil, err
	}
	for _, i := range list {
		if i.Name == name {
			return installedSkillOf(i), nil
		}
	}
	return nil, statusErr(http.StatusNotFound, "Skill '%s' is not installed", name)
}

func (s *Server) handleSkillState(in *request[skillNamePath, pluginStateRequest]) (any, error) {
	name, err := skillName(in.r)
	if err != nil {
		return nil, err
	}
	return setInstalledState(skillStore(), "Skill", name, in.body.Enabled)
}

func (s *Server) handleUninstallSkill(in *request[skillNamePath, none]) (any, error) {
	name, err := skillName(in.r)
	if err != nil {
		return nil, err
	}
	return uninstallInstalled(skillStore(), "Skill", name)
}
