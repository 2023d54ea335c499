package server

import (
	"os"

	"github.com/gohands/gohands/skill"
)

// skillsRequest is the body of POST /api/skills: which sources to load
// (each true when left out). The public catalog, registered marketplaces,
// organisation repositories and sandbox URLs of the reference's request
// are accepted and load nothing here: gohands has no public skill
// catalog, and fetching an organisation's repository is not built.
type skillsRequest struct {
	LoadPublic  *bool   `json:"load_public"`
	LoadUser    *bool   `json:"load_user"`
	LoadProject *bool   `json:"load_project"`
	LoadOrg     *bool   `json:"load_org"`
	ProjectDir  *string `json:"project_dir"`
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
	// Sources counts the skills of each source, by the reference's names.
	Sources map[string]int `json:"sources"`
}

func (s *Server) skillRoutes() []*route {
	return []*route{
		{method: "POST", path: "/api/skills", summary: "The skills of the user and of a project, merged (the project's win on a name clash)", tag: "Skills", body: skillsRequest{}, resp: skillsResponse{}, errors: []int{422}, h: handle(s, nil, s.handleSkills)},
	}
}

func (s *Server) handleSkills(in *request[none, skillsRequest]) (any, error) {
	on := func(b *bool) bool { return b == nil || *b }
	var user, project []skill.Skill
	var warns []skill.Warning
	if on(in.body.LoadUser) {
		if home, err := os.UserHomeDir(); err == nil {
			user, warns = skill.LoadUser(home)
		}
	}
	if on(in.body.LoadProject) && in.body.ProjectDir != nil && *in.body.ProjectDir != "" {
		var w []skill.Warning
		project, w = skill.LoadProject(*in.body.ProjectDir)
		warns = append(warns, w...)
	}
	for _, w := range warns {
		s.log.Warn("skills: a skill cannot be loaded", "err", w.Error())
	}
	out := skillsResponse{
		Skills: []skillInfo{},
		// sdk_base is the reference's user-and-public tier.
		Sources: map[string]int{"sandbox": 0, "registered_marketplaces": 0, "sdk_base": len(user), "org": 0, "project": len(project)},
	}
	for _, sk := range skill.Merge(nil, project, user) {
		out.Skills = append(out.Skills, skillInfoOf(sk))
	}
	return out, nil
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
