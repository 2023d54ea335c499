package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/server/userstore"
)

// Provider connections (/api/llm/provider-connections) are shared LLM
// credentials, a key and an address, that LLM profiles name by
// provider_connection_id, so a key is rotated in one place. They are
// stored in the reference's layout (userstore.Connections), the key
// sealed with the server's key and never answered: a connection says only
// whether it has one.

// maxConnections bounds the stored connections, as the reference's does.
const maxConnections = 64

type connectionPath struct {
	ID string `path:"connection_id"`
}

// connectionFields is the body of a create or an update: each member
// present, and its value (null is nil).
type connectionFields struct {
	set         map[string]bool
	DisplayName *string
	Provider    *string
	APIKey      *string
	BaseURL     *string
}

// decode checks the body as the reference's request models do: no
// unknown member, strings within their lengths, a key neither blank nor
// redacted.
func (f *connectionFields) decode(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return jsonInvalid(err)
	}
	f.set = map[string]bool{}
	for k, v := range raw {
		var dst **string
		max := 128
		switch k {
		case "display_name":
			dst = &f.DisplayName
		case "provider":
			dst = &f.Provider
		case "api_key":
			dst, max = &f.APIKey, 0
		case "base_url":
			dst, max = &f.BaseURL, 2048
		default:
			return &invalidError{loc: []any{"body", k}, typ: "extra_forbidden", msg: "Extra inputs are not permitted"}
		}
		f.set[k] = true
		if string(v) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return &invalidError{loc: []any{"body", k}, typ: "string_type", msg: "Input should be a valid string"}
		}
		switch {
		case k != "base_url" && s == "":
			return &invalidError{loc: []any{"body", k}, typ: "string_too_short", msg: "String should have at least 1 character"}
		case max > 0 && len([]rune(s)) > max:
			return &invalidError{loc: []any{"body", k}, typ: "string_too_long", msg: fmt.Sprintf("String should have at most %d characters", max)}
		case k == "api_key" && (strings.TrimSpace(s) == "" || s == userstore.Redacted):
			return &invalidError{loc: []any{"body", k}, typ: "value_error", msg: "Value error, api_key must be a real key, not blank or redacted"}
		}
		*dst = &s
	}
	return nil
}

type connectionResponse struct {
	ID          string  `json:"id"`
	DisplayName string  `json:"display_name"`
	Provider    string  `json:"provider"`
	BaseURL     *string `json:"base_url"`
	CreatedAt   int64   `json:"created_at"`
	UpdatedAt   int64   `json:"updated_at"`
	APIKeySet   bool    `json:"api_key_set"`
}

func connectionAnswer(c userstore.Connection) connectionResponse {
	return connectionResponse{ID: c.ID, DisplayName: c.DisplayName, Provider: c.Provider, BaseURL: c.BaseURL, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, APIKeySet: c.APIKey != nil}
}

func (s *Server) connectionRoutes() []*route {
	const (
		p  = "/api/llm/provider-connections"
		tc = "LLM Provider Connections"
	)
	return []*route{
		{method: "GET", path: p, summary: "The shared provider connections (keys never shown)", tag: tc, resp: []connectionResponse{}, h: handle(s, nil, s.handleListConnections)},
		{method: "POST", path: p, summary: "Add a provider connection (409 beyond 64)", tag: tc, body: connectionFields{}, resp: connectionResponse{}, status: http.StatusCreated, errors: []int{409, 422}, h: handle(s, nil, s.handleCreateConnection)},
		{method: "PATCH", path: p + "/{connection_id}", summary: "Change a provider connection; a new key rotates it for every profile naming it", tag: tc, query: &connectionPath{}, body: connectionFields{}, resp: connectionResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleUpdateConnection)},
		{method: "DELETE", path: p + "/{connection_id}", summary: "Delete a provider connection no profile or the settings name (409 otherwise)", tag: tc, query: &connectionPath{}, resp: connectionResponse{}, errors: []int{404, 409}, h: handle(s, nil, s.handleDeleteConnection)},
	}
}

// connectionErr maps the store's errors to the reference's answers.
func connectionErr(id string, err error) error {
	switch {
	case errors.Is(err, userstore.ErrNoConnection):
		return statusErr(http.StatusNotFound, "Provider connection '%s' not found", id)
	case errors.Is(err, userstore.ErrConnectionLimit):
		return statusErr(http.StatusConflict, "Provider connection limit reached (%d). Delete one before adding another.", maxConnections)
	case errors.Is(err, userstore.ErrUnreadable):
		return statusErr(http.StatusConflict, "%s", err.Error())
	}
	return err
}

func (s *Server) handleListConnections(*request[none, none]) (any, error) {
	list, err := s.connections.List()
	if err != nil {
		return nil, connectionErr("", err)
	}
	out := []connectionResponse{}
	for _, c := range list {
		out = append(out, connectionAnswer(c))
	}
	return out, nil
}

func (s *Server) handleCreateConnection(in *request[none, connectionFields]) (any, error) {
	b := in.body
	for _, k := range []string{"display_name", "api_key"} {
		if !b.set[k] {
			return nil, &invalidError{loc: []any{"body", k}, typ: "missing", msg: "Field required"}
		}
	}
	if b.DisplayName == nil || b.APIKey == nil || b.set["provider"] && b.Provider == nil {
		return nil, invalid("display_name, provider and api_key cannot be null", "body")
	}
	now := time.Now().Unix()
	c := userstore.Connection{ID: strings.ReplaceAll(uuid.NewString(), "-", ""), DisplayName: *b.DisplayName, Provider: "custom", APIKey: b.APIKey, BaseURL: b.BaseURL, CreatedAt: now, UpdatedAt: now}
	if b.Provider != nil {
		c.Provider = *b.Provider
	}
	if err := s.connections.Create(c, maxConnections); err != nil {
		return nil, connectionErr(c.ID, err)
	}
	s.log.Info("provider connection created", "connection_id", c.ID)
	return reply{http.StatusCreated, connectionAnswer(c)}, nil
}

func (s *Server) handleUpdateConnection(in *request[connectionPath, connectionFields]) (any, error) {
	b, id := in.body, in.query.ID
	if len(b.set) == 0 {
		return nil, statusErr(http.StatusUnprocessableEntity, "Provide at least one provider connection field to update")
	}
	for _, k := range []string{"display_name", "provider"} {
		if b.set[k] && (k == "display_name" && b.DisplayName == nil || k == "provider" && b.Provider == nil) {
			return nil, invalid("Value error, "+k+" cannot be set to null", "body")
		}
	}
	if _, err := s.connections.Get(id); err != nil {
		return nil, connectionErr(id, err)
	}
	if b.set["api_key"] && b.APIKey == nil {
		return nil, statusErr(http.StatusUnprocessableEntity, "api_key cannot be cleared; provide a new key to rotate it")
	}
	c, err := s.connections.Update(id, func(c *userstore.Connection) {
		c.UpdatedAt = time.Now().Unix()
		if b.DisplayName != nil {
			c.DisplayName = *b.DisplayName
		}
		if b.Provider != nil {
			c.Provider = *b.Provider
		}
		if b.set["base_url"] {
			c.BaseURL = b.BaseURL
		}
		if b.APIKey != nil {
			c.APIKey = b.APIKey
		}
	})
	if err != nil {
		return nil, connectionErr(id, err)
	}
	s.log.Info("provider connection updated", "connection_id", id, "key_rotated", b.APIKey != nil)
	return connectionAnswer(c), nil
}

func (s *Server) handleDeleteConnection(in *request[connectionPath, none]) (any, error) {
	id := in.query.ID
	c, err := s.connections.Delete(id, func(userstore.Connection) error { return s.connectionInUse(id) })
	if err != nil {
		return nil, connectionErr(id, err)
	}
	s.log.Info("provider connection deleted", "connection_id", id)
	out := connectionAnswer(c)
	out.APIKeySet = false
	return out, nil
}

// connectionInUse refuses to delete a connection an LLM profile or the
// settings' LLM still names: their next use would find no key.
func (s *Server) connectionInUse(id string) error {
	list, err := s.profiles.List()
	if err != nil {
		return err
	}
	var names []string
	for _, p := range list {
		if p.ProviderConnectionID != nil && *p.ProviderConnectionID == id {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	var reasons []string
	if len(names) > 0 {
		reasons = append(reasons, "referenced by LLM profile(s): "+strings.Join(names, ", "))
	}
	if d, err := s.settings.Load(); err == nil {
		if m, ok := d.AgentSettings["llm"].(map[string]any); ok && m["provider_connection_id"] == id {
			reasons = append(reasons, "referenced by the active agent settings")
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return statusErr(http.StatusConflict, "Provider connection cannot be deleted while it is %s. Update those references before deleting it.", strings.Join(reasons, " and "))
}
