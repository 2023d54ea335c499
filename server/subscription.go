package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gohands/gohands/llm/subscription"
)

// The OpenAI (ChatGPT) subscription routes sign in with the reference's
// device-code login (package llm/subscription) and keep the login where
// the reference does (auth/openai_oauth.json in the persistence
// directory), so either program uses the other's. device/start asks the
// issuer for a user code and answers an opaque polling token in its
// place; device/poll asks the issuer once and, when the user has
// finished, stores the tokens and answers connected; status refreshes an
// expired login; logout removes it and forgets the logins under way.
// Tokens never leave the server. The issuer is Options.OpenAIIssuer,
// https://auth.openai.com by default; the tests script one on loopback,
// since the real one cannot be reached from them. An issuer that fails
// or cannot be reached is the reference's 500 with an error_id, logged
// with that id.

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

type subscriptionDeviceStart struct {
	// DeviceCode is the server's opaque polling token, not the issuer's.
	DeviceCode              string  `json:"device_code"`
	UserCode                string  `json:"user_code"`
	VerificationURI         string  `json:"verification_uri"`
	VerificationURIComplete *string `json:"verification_uri_complete"`
	ExpiresAt               int64   `json:"expires_at"`
	IntervalSeconds         int     `json:"interval_seconds"`
}

// subscriptionLogins are the device logins under way, by polling token.
type subscriptionLogins struct {
	mu       sync.Mutex
	pending  map[string]*pendingLogin
	inFlight map[string]bool // polled now: a second poll answers not connected
	// epoch counts logouts: a login started before one is not stored.
	epoch int
	// refresh serialises refreshes, so a rotated refresh token is not
	// spent twice.
	refresh sync.Mutex
}

type pendingLogin struct {
	code      *subscription.DeviceCode
	expiresAt int64 // Unix milliseconds
	epoch     int
}

// dropExpired forgets the logins whose time is up; l.mu is held.
func (l *subscriptionLogins) dropExpired(now int64) {
	for k, p := range l.pending {
		if p.expiresAt <= now {
			delete(l.pending, k)
		}
	}
}

func (s *Server) subscriptionRoutes() []*route {
	const p, t = "/api/llm/subscription/openai", "LLM"
	return []*route{
		{method: "GET", path: p + "/models", summary: "The models a ChatGPT subscription offers", tag: t, resp: subscriptionModelsResponse{}, h: handle(s, nil, s.handleSubscriptionModels)},
		{method: "GET", path: p + "/status", summary: "Whether a ChatGPT subscription login is stored and usable, refreshing an expired one (never its tokens)", tag: t, resp: subscriptionStatus{}, h: handle(s, nil, s.handleSubscriptionStatus)},
		{method: "POST", path: p + "/device/start", summary: "Start a ChatGPT device-code sign-in (never returns tokens)", tag: t, resp: subscriptionDeviceStart{}, errors: []int{500}, h: handle(s, nil, s.handleSubscriptionStart)},
		{method: "POST", path: p + "/device/poll", summary: "Poll a ChatGPT device-code sign-in started here; stores the login once the user has finished", tag: t, body: subscriptionPollRequest{}, resp: subscriptionStatus{}, errors: []int{404, 422, 500}, h: handle(s, nil, s.handleSubscriptionPoll)},
		{method: "POST", path: p + "/logout", summary: "Remove the stored ChatGPT subscription login", tag: t, resp: subscriptionStatus{}, h: handle(s, nil, s.handleSubscriptionLogout)},
	}
}

func (s *Server) subscriptionClient() *subscription.Client {
	return subscription.New(&subscription.Options{Issuer: s.opts.OpenAIIssuer})
}

func (s *Server) subscriptionStore() subscription.Store {
	return subscription.Store{Dir: s.opts.PersistenceDir}
}

// issuerFailed is the reference's answer to an exception it did not
// expect (an issuer that fails or cannot be reached): 500 with an id that
// ties it to the log line.
func (s *Server) issuerFailed(r *http.Request, err error) reply {
	b := make([]byte, 16)
	rand.Read(b)
	id := hex.EncodeToString(b)
	s.log.Error("OpenAI subscription login failed", "path", r.URL.Path, "err", err, "error_id", id)
	return reply{status: http.StatusInternalServerError, body: map[string]string{"detail": "Internal Server Error", "exception": err.Error(), "error_id": id}}
}

func (s *Server) handleSubscriptionModels(*request[none, none]) (any, error) {
	return subscriptionModelsResponse{Vendor: subscription.Vendor, Models: subscription.Models}, nil
}

func (s *Server) handleSubscriptionStatus(in *request[none, none]) (any, error) {
	out := subscriptionStatus{Vendor: subscription.Vendor}
	c, err := s.freshSubscriptionLogin(context.WithoutCancel(in.r.Context()))
	if err != nil {
		// A refused refresh or an unreachable issuer leaves no usable
		// login now, as the reference answers.
		s.log.Warn("the OpenAI subscription login is not usable", "err", err)
		return out, nil
	}
	if c != nil && !c.Expired(time.Now()) {
		out.Connected, out.ExpiresAt = true, &c.ExpiresAt
	}
	return out, nil
}

// freshSubscriptionLogin is the stored login, refreshed first if it has
// expired: nil when there is none.
func (s *Server) freshSubscriptionLogin(ctx context.Context) (*subscription.Credentials, error) {
	l := &s.subLogins
	l.refresh.Lock()
	defer l.refresh.Unlock()
	store := s.subscriptionStore()
	c, err := store.Load()
	if errors.Is(err, subscription.ErrUnreadable) {
		s.log.Warn("the stored OpenAI subscription login cannot be read; it counts as none", "file", store.Path())
		return nil, nil
	}
	if err != nil || c == nil || !c.Expired(time.Now()) {
		return c, err
	}
	l.mu.Lock()
	epoch := l.epoch
	l.mu.Unlock()
	nc, err := s.subscriptionClient().Refresh(ctx, c)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != epoch { // logged out meanwhile
		return nil, nil
	}
	if err := store.Save(nc); err != nil {
		return nil, err
	}
	return nc, nil
}

func (s *Server) handleSubscriptionStart(in *request[none, none]) (any, error) {
	code, err := s.subscriptionClient().StartDevice(in.r.Context())
	if err != nil {
		return s.issuerFailed(in.r, err), nil
	}
	tok := make([]byte, 32)
	rand.Read(tok)
	token := base64.RawURLEncoding.EncodeToString(tok)
	expires := time.Now().Add(subscription.DeviceLoginLifetime).UnixMilli()
	l := &s.subLogins
	l.mu.Lock()
	l.dropExpired(time.Now().UnixMilli())
	if l.pending == nil {
		l.pending = map[string]*pendingLogin{}
	}
	l.pending[token] = &pendingLogin{code: code, expiresAt: expires, epoch: l.epoch}
	l.mu.Unlock()
	return subscriptionDeviceStart{
		DeviceCode:      token,
		UserCode:        code.UserCode,
		VerificationURI: code.VerificationURL,
		ExpiresAt:       expires,
		IntervalSeconds: int(code.Interval / time.Second),
	}, nil
}

func (s *Server) handleSubscriptionPoll(in *request[none, subscriptionPollRequest]) (any, error) {
	out := subscriptionStatus{Vendor: subscription.Vendor}
	token := in.body.DeviceCode
	l := &s.subLogins
	l.mu.Lock()
	l.dropExpired(time.Now().UnixMilli())
	p := l.pending[token]
	if p == nil {
		busy := l.inFlight[token]
		l.mu.Unlock()
		if busy {
			return out, nil
		}
		return nil, statusErr(http.StatusNotFound, "Subscription device login not found or expired")
	}
	delete(l.pending, token)
	if l.inFlight == nil {
		l.inFlight = map[string]bool{}
	}
	l.inFlight[token] = true
	l.mu.Unlock()

	// The exchange is finished even if the caller goes: the issuer's
	// authorization code is good once. Each request is bounded.
	c, err := s.subscriptionClient().PollDevice(context.WithoutCancel(in.r.Context()), p.code)

	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inFlight, token)
	if c == nil {
		// Still pending, or failed before any token came: the login stays
		// pollable (unless logged out meanwhile).
		if p.epoch == l.epoch {
			l.pending[token] = p
		}
		if err != nil && !errors.Is(err, subscription.ErrPending) {
			return s.issuerFailed(in.r, err), nil
		}
		return out, nil
	}
	if p.epoch != l.epoch {
		return out, nil
	}
	if err := s.subscriptionStore().Save(c); err != nil {
		return nil, err
	}
	out.Connected, out.ExpiresAt = true, &c.ExpiresAt
	return out, nil
}

func (s *Server) handleSubscriptionLogout(*request[none, none]) (any, error) {
	l := &s.subLogins
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epoch++
	clear(l.pending)
	if _, err := s.subscriptionStore().Delete(); err != nil {
		return nil, err
	}
	return subscriptionStatus{Vendor: subscription.Vendor}, nil
}
