package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The OpenAI (ChatGPT) subscription routes read the credentials the
// reference's device login stores (auth/openai_oauth.json in the
// persistence directory). gohands has no device login and cannot refresh
// an expired token, so: status reports a stored, unexpired login as
// connected and anything else as not connected (the reference's answer
// when a refresh fails); logout removes the stored login; poll answers
// 404 for every device code, since no login was started here; models is
// the list of models the subscription offers (the reference's); and
// device/start is not built. The LLM layer does not use a subscription
// login yet either (llm/doc.go).

// subscriptionModels are the models a ChatGPT subscription offers, as
// the reference 1.58.2 lists them (sorted).
var subscriptionModels = []string{"gpt-5.5", "gpt-5.6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-6-astra", "gpt-6-luna", "gpt-6-sol", "gpt-6.1-sol"}

type subscriptionStatus struct {
	Vendor       string  `json:"vendor"`
	Connected    bool    `json:"connected"`
	AccountEmail *string `json:"account_email"`
	ExpiresAt    *int64  `json:"expires_at"`
}

type subscriptionModelsResponse struct {
	Vendor string   `json:"vendor"`
	Models []string `json:"models"`
}

type subscriptionPollRequest struct {
	DeviceCode string `json:"device_code" required:"true"`
}

func (s *Server) subscriptionRoutes() []*route {
	const p, t = "/api/llm/subscription/openai", "LLM"
	return []*route{
		{method: "GET", path: p + "/models", summary: "The models a ChatGPT subscription offers", tag: t, resp: subscriptionModelsResponse{}, h: handle(s, nil, s.handleSubscriptionModels)},
		{method: "GET", path: p + "/status", summary: "Whether a ChatGPT subscription login is stored and unexpired (never its tokens)", tag: t, resp: subscriptionStatus{}, h: handle(s, nil, s.handleSubscriptionStatus)},
		{method: "POST", path: p + "/logout", summary: "Remove the stored ChatGPT subscription login", tag: t, resp: subscriptionStatus{}, h: handle(s, nil, s.handleSubscriptionLogout)},
		{method: "POST", path: p + "/device/poll", summary: "Poll a device login started here (none can be: 404)", tag: t, body: subscriptionPollRequest{}, resp: subscriptionStatus{}, errors: []int{404, 422}, h: handle(s, nil, s.handleSubscriptionPoll)},
	}
}

// subscriptionFile is where the reference keeps the OpenAI login.
func (s *Server) subscriptionFile() string {
	return filepath.Join(s.opts.PersistenceDir, "auth", "openai_oauth.json")
}

func (s *Server) handleSubscriptionModels(*request[none, none]) (any, error) {
	return subscriptionModelsResponse{Vendor: "openai", Models: subscriptionModels}, nil
}

func (s *Server) handleSubscriptionStatus(*request[none, none]) (any, error) {
	out := subscriptionStatus{Vendor: "openai"}
	b, err := os.ReadFile(s.subscriptionFile())
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	var c struct {
		Type        string  `json:"type"`
		Vendor      *string `json:"vendor"`
		AccessToken *string `json:"access_token"`
		Refresh     *string `json:"refresh_token"`
		ExpiresAt   *int64  `json:"expires_at"`
	}
	if json.Unmarshal(b, &c) != nil || c.Vendor == nil || c.AccessToken == nil || c.Refresh == nil || c.ExpiresAt == nil {
		s.log.Warn("the stored OpenAI subscription login cannot be read; it counts as none", "file", s.subscriptionFile())
		return out, nil
	}
	// An expired token (with the reference's minute of margin) would need
	// a refresh, which gohands cannot do.
	if *c.ExpiresAt >= time.Now().UnixMilli()+60_000 {
		out.Connected, out.ExpiresAt = true, c.ExpiresAt
	}
	return out, nil
}

func (s *Server) handleSubscriptionLogout(*request[none, none]) (any, error) {
	if err := os.Remove(s.subscriptionFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing the OpenAI subscription login: %w", err)
	}
	return subscriptionStatus{Vendor: "openai"}, nil
}

func (s *Server) handleSubscriptionPoll(*request[none, subscriptionPollRequest]) (any, error) {
	return nil, statusErr(404, "Subscription device login not found or expired")
}
