package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/server/userstore"
)

// Meta-profiles (/api/meta-profiles) are the reference's model-routing
// configurations: a classifier profile and the profile each class of
// task goes to. They are stored as the reference stores them
// (meta-profiles/NAME.json); the settings' active_meta_profile names the
// one the route_task_to_model tool (tools/routetask) reads, and, as in
// the reference, the settings route is what activates one.

const maxMetaProfiles = 50

type metaProfileClass struct {
	Description string `json:"description"`
	Model       string `json:"model"`
}

type metaProfile struct {
	ClassifierModel string             `json:"classifier_model"`
	Classes         []metaProfileClass `json:"classes"`
	PromptTemplate  *string            `json:"prompt_template"`
	ModelTable      *string            `json:"model_table"`
}

type metaProfileInfo struct {
	Name            string  `json:"name"`
	ClassifierModel *string `json:"classifier_model"`
	NumClasses      int     `json:"num_classes"`
}

type metaProfileList struct {
	MetaProfiles      []metaProfileInfo `json:"meta_profiles"`
	ActiveMetaProfile *string           `json:"active_meta_profile"`
}

type metaProfileDetail struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
}

var instanceText = regexp.MustCompile(`{{\s*instance_text\s*}}`)

// decode checks a meta-profile as the reference's model and its save
// route do.
func (m *metaProfile) decode(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return jsonInvalid(err)
	}
	if _, ok := raw["classifier_model"]; !ok {
		return &invalidError{loc: []any{"body", "classifier_model"}, typ: "missing", msg: "Field required"}
	}
	if err := json.Unmarshal(b, m); err != nil {
		return jsonInvalid(err)
	}
	for i, c := range m.Classes {
		if c.Description == "" || c.Model == "" {
			return &invalidError{loc: []any{"body", "classes", i}, typ: "missing", msg: "Field required: description and model"}
		}
	}
	switch {
	case m.PromptTemplate != nil && !instanceText.MatchString(*m.PromptTemplate):
		return invalid("Direct-routing meta-profiles must include {{ instance_text }} in prompt_template.", "body")
	case m.PromptTemplate != nil && len(m.Classes) > 0:
		return invalid("Direct-routing meta-profiles cannot also define classes.", "body")
	case m.PromptTemplate == nil && len(m.Classes) == 0:
		return invalid("A meta-profile needs either classes or a prompt_template to route.", "body")
	}
	if m.Classes == nil {
		m.Classes = []metaProfileClass{}
	}
	return nil
}

func (s *Server) metaProfileRoutes() []*route {
	const (
		p  = "/api/meta-profiles/{name}"
		tm = "Meta-profiles"
	)
	return []*route{
		{method: "GET", path: "/api/meta-profiles", summary: "The saved meta-profiles and the active one", tag: tm, resp: metaProfileList{}, h: handle(s, nil, s.handleListMetaProfiles)},
		{method: "GET", path: p, summary: "A meta-profile", tag: tm, query: &profilePath{}, resp: metaProfileDetail{}, errors: []int{404, 422}, h: handle(s, nil, s.handleGetMetaProfile)},
		{method: "POST", path: p, summary: "Save a meta-profile (409 beyond 50)", tag: tm, query: &profilePath{}, body: metaProfile{}, resp: protocol.ProfileMutationResponse{}, status: http.StatusCreated, errors: []int{409, 422}, h: handle(s, nil, s.handleSaveMetaProfile)},
		{method: "DELETE", path: p, summary: "Delete a meta-profile (idempotent)", tag: tm, query: &profilePath{}, resp: protocol.ProfileMutationResponse{}, errors: []int{422}, h: handle(s, nil, s.handleDeleteMetaProfile)},
	}
}

func (s *Server) handleListMetaProfiles(*request[none, none]) (any, error) {
	names, err := s.metaProfiles.Names()
	if err != nil {
		return nil, err
	}
	d, err := s.settings.Load()
	if err != nil {
		return nil, err
	}
	out := metaProfileList{MetaProfiles: []metaProfileInfo{}, ActiveMetaProfile: d.ActiveMetaProfile}
	for _, n := range names {
		m, err := s.metaProfiles.Load(n)
		if err != nil {
			continue // unreadable: left out, as the reference does
		}
		info := metaProfileInfo{Name: n}
		if c, ok := m["classifier_model"].(string); ok {
			info.ClassifierModel = &c
		}
		if cl, ok := m["classes"].([]any); ok {
			info.NumClasses = len(cl)
		}
		out.MetaProfiles = append(out.MetaProfiles, info)
	}
	return out, nil
}

func (s *Server) handleGetMetaProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	m, err := s.metaProfiles.Load(name)
	if errors.Is(err, userstore.ErrNoProfile) {
		return nil, statusErr(http.StatusNotFound, "Meta-profile '%s' not found", name)
	}
	if err != nil {
		return nil, err
	}
	return metaProfileDetail{Name: name, Config: m}, nil
}

func (s *Server) handleSaveMetaProfile(in *request[profilePath, metaProfile]) (any, error) {
	name := in.query.Name
	b, err := json.Marshal(in.body)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	err = s.metaProfiles.Save(name, m, false, maxMetaProfiles)
	if errors.Is(err, userstore.ErrProfileLimit) {
		return nil, statusErr(http.StatusConflict, "Meta-profile limit reached (%d). Delete a meta-profile before saving a new one.", maxMetaProfiles)
	}
	if err != nil {
		return nil, err
	}
	return reply{http.StatusCreated, protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Meta-profile '%s' saved", name)}}, nil
}

func (s *Server) handleDeleteMetaProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	if err := s.metaProfiles.Delete(name); err != nil {
		return nil, err
	}
	if _, err := s.settings.Update(func(d *userstore.Doc) error {
		if d.ActiveMetaProfile != nil && *d.ActiveMetaProfile == name {
			d.ActiveMetaProfile = nil
		}
		return nil
	}); err != nil {
		s.log.Warn("meta-profile deleted, but the active one could not be cleared", "meta_profile", name, "err", err)
	}
	return protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Meta-profile '%s' deleted", name)}, nil
}
