package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohands/gohands/conversation/pgstore"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server/userstore"
	"github.com/gohands/gohands/telemetry/prom"
)

// Defaults of Options, the reference's where it has one.
const (
	DefaultConversationsPath = "workspace/conversations"
	DefaultWorkspacePath     = "workspace/project"
	DefaultBashEventsDir     = "workspace/bash_events"
	DefaultMaxConcurrentRuns = 10
	DefaultIdleTTL           = 20 * time.Minute
	DefaultMaxRequestBytes   = 16 << 20
	DefaultMaxUploadBytes    = 1 << 30
	DefaultMaxSubscribers    = 100
	DefaultSubscriberBuffer  = 4096
)

// Options configure a Server. A nil *Options is the default: conversations
// under ./workspace/conversations, no session keys (no authentication).
type Options struct {
	// ConversationsPath is the directory conversations are stored in, one
	// directory per conversation (meta.json, base_state.json, events/).
	ConversationsPath string
	// WorkspacePath is the working directory of conversations whose
	// request names none.
	WorkspacePath string
	// BashEventsDir is where bash commands and their outputs are kept.
	BashEventsDir string
	// SessionAPIKeys are the accepted X-Session-API-Key values; several
	// allow key rotation. Empty means no authentication.
	SessionAPIKeys []string
	// AllowedHosts are host names, besides localhost and IP addresses,
	// that a server without session keys answers to in a request's Host
	// (the names it is reached by on a network). A name not listed is
	// refused, which defeats DNS rebinding (see sameOrigin).
	AllowedHosts []string
	// InternalURL is the base URL this server's start_child_conversation
	// tool reaches it at. "" is $OH_INTERNAL_SERVER_URL when set (gohands
	// serve sets it to its listener), else the address of the listener
	// the server's first request came on. It is handed over to the tool
	// process-wide (childconversation.UseServer, with the first session
	// key) until Close. Secrets given as relative URLs still resolve
	// against $OH_INTERNAL_SERVER_URL.
	InternalURL string
	// SecretKey encrypts secrets at rest (base_state.json, meta.json); by
	// default the first session key, as in the reference. Without any,
	// secrets are redacted on disk and lost on restart.
	SecretKey string
	// PreviousSecretKeys are earlier values of SecretKey, used only to
	// decrypt: values saved under them stay readable, and the settings and
	// secrets stores are re-encrypted under SecretKey at start.
	PreviousSecretKeys []string
	// PersistenceDir holds the user's settings, secrets and saved
	// workspaces (settings.json, secrets.json, workspaces.json); by default
	// .openhands beside ConversationsPath. `gohands serve` uses
	// $OH_PERSISTENCE_DIR, else ~/.openhands, as the reference does.
	PersistenceDir string
	// AllowCORSOrigins are the browser origins (scheme://host[:port]) that
	// may call the API from their pages; AllowCORSOriginRegex matches
	// more. Loopback origins are allowed too, as in the reference.
	AllowCORSOrigins     []string
	AllowCORSOriginRegex string
	// DeferredInit asks the program to start dormant (NewDeferred) until
	// POST /api/init brings the rest of the configuration; New ignores it.
	DeferredInit bool
	// MaxConcurrentRuns bounds the conversations running at once; a run
	// beyond it is refused with 429.
	MaxConcurrentRuns int
	// IdleTTL is how long an idle conversation (not running, no socket)
	// that has run since it was loaded stays in memory (its tools may hold
	// a shell); one that has not is released after a second or IdleTTL,
	// whichever is shorter. Either is reloaded from disk on demand.
	// Negative keeps conversations loaded.
	IdleTTL time.Duration
	// MaxRequestBytes bounds JSON request bodies; MaxUploadBytes uploads.
	MaxRequestBytes int64
	MaxUploadBytes  int64
	// MaxSubscribers bounds the sockets of one conversation (close 1013
	// beyond it).
	MaxSubscribers int
	// SubscriberBuffer is how many events may wait for one socket; a socket
	// that falls further behind is closed (its client reconciles over REST).
	SubscriberBuffer int
	// Postgres, if set, keeps the conversations in a PostgreSQL database
	// instead of ConversationsPath, shared with other servers using it:
	// each conversation runs on the server holding its lease (see package
	// conversation/pgstore), and any server answers for any conversation.
	Postgres *pgstore.Backend
	// Webhooks receive event batches and conversation updates.
	Webhooks []WebhookSpec
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Version is reported by /server_info.
	Version string
	// Profiles are the named model configurations of switch_profile and
	// a conversation's title_llm_profile (the user's settings'
	// llm_profiles).
	Profiles llm.Profiles
	// ConversationWorktreeRoot holds the git worktrees of conversations
	// started with worktree set (DefaultConversationWorktreeRoot by
	// default), one directory per conversation.
	ConversationWorktreeRoot string
	// AutoTitle titles each conversation whose autotitle is set (the
	// reference's default) from its first user message, as the
	// reference's server does; off, titles are only set by PATCH.
	AutoTitle bool
	// SecurityAnalysisEvents keeps a SecurityAnalysisEvent in the log of
	// each batch of actions a security analyzer rated. Off by default: the
	// kind is gohands' own, and the reference's clients (1.43.1) fail to
	// decode it when they list events.
	SecurityAnalysisEvents bool
	// Metrics, if set, is served on GET /metrics (behind the session key)
	// in the Prometheus text format, with the server's own gauges
	// (conversations by status, sockets, runs). It counts only what
	// reaches it as the process's telemetry tracer (telemetry.SetTracer).
	Metrics *prom.Registry
	// RegisteredMarketplaces are loaded by POST /api/skills with the
	// request's own (which win by name), as the reference's
	// registered_marketplaces setting.
	RegisteredMarketplaces []plugin.Registration
	// OpenAIIssuer is the base URL of the OAuth issuer of the ChatGPT
	// subscription login (llm/subscription.DefaultIssuer when empty); a
	// test points it at an issuer it scripts.
	OpenAIIssuer string
	// GitHubAPI is the base URL of GitHub's REST API, where the search of
	// the user's repositories goes (DefaultGitHubAPI when empty); a test
	// points it at a GitHub it scripts.
	GitHubAPI string
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.ConversationsPath == "" {
		c.ConversationsPath = DefaultConversationsPath
	}
	if c.WorkspacePath == "" {
		c.WorkspacePath = DefaultWorkspacePath
	}
	if c.BashEventsDir == "" {
		c.BashEventsDir = DefaultBashEventsDir
	}
	if c.GitHubAPI == "" {
		c.GitHubAPI = DefaultGitHubAPI
	}
	if c.ConversationWorktreeRoot == "" {
		c.ConversationWorktreeRoot = DefaultConversationWorktreeRoot
	}
	if c.MaxConcurrentRuns <= 0 {
		c.MaxConcurrentRuns = DefaultMaxConcurrentRuns
	}
	if c.IdleTTL == 0 {
		c.IdleTTL = DefaultIdleTTL
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxUploadBytes <= 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.MaxSubscribers <= 0 {
		c.MaxSubscribers = DefaultMaxSubscribers
	}
	if c.SubscriberBuffer <= 0 {
		c.SubscriberBuffer = DefaultSubscriberBuffer
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.SecretKey == "" && len(c.SessionAPIKeys) > 0 {
		c.SecretKey = c.SessionAPIKeys[0]
	}
	return c
}

// Server is the agent server: an http.Handler serving the reference's REST
// and WebSocket API over conversations stored in one directory.
type Server struct {
	opts    Options
	cat     catalog
	log     *slog.Logger
	cipher  *secret.Cipher
	handler http.Handler
	mcpJobs mcpOAuthJobs // MCP OAuth authorizations in progress (mcp.go)
	routes  []*route
	started time.Time
	active  atomic.Int64 // unix nanoseconds of the last request
	// subLogins are the ChatGPT device logins in progress (subscription.go).
	subLogins subscriptionLogins

	mu    sync.RWMutex
	convs map[string]*conv
	order convOrder // the stored conversations by creation
	kids  family    // child conversations by parent (family.go)

	runs    atomic.Int64 // conversations running
	runWG   sync.WaitGroup
	closing atomic.Bool

	dropped droppedSockets // sockets closed for falling behind, for /metrics

	endedGrace time.Duration // see conv.publishEndedRun
	// runReturned, if set (by tests), is called when a conversation's run
	// has returned, before the server records its end.
	runReturned func(id string)

	corsRegex *regexp.Regexp

	settings     *userstore.Settings
	secrets      *userstore.Secrets
	workspaces   *userstore.Workspaces
	profiles     *userstore.Profiles
	metaProfiles *userstore.Profiles
	// agentProfiles is the agent-profile store; agentProfilesMu makes
	// seeding the default profile and moving the active pointer atomic.
	agentProfiles   *userstore.AgentProfiles
	agentProfilesMu sync.Mutex
	// publicRepoCache keeps the public extensions repository between
	// catalog requests.
	publicRepoCache publicRepoCache
	// acpDiscoveries keeps the answers of POST /api/acp/models.
	acpDiscoveries acpDiscoveries
	connections    *userstore.Connections

	bash  *bashService
	hooks []*webhook

	// internal hands the server over to start_child_conversation.
	internal internalURL

	stop     chan struct{}
	janitor  sync.WaitGroup
	closeErr error
	closeMu  sync.Mutex
	closed   bool
}

// New returns a server over the conversations stored in
// opts.ConversationsPath (created if missing). Stored conversations are
// listed at once and loaded on first use.
func New(opts *Options) (*Server, error) {
	o := opts.withDefaults()
	if o.PersistenceDir == "" {
		o.PersistenceDir = filepath.Join(filepath.Dir(filepath.Clean(o.ConversationsPath)), ".openhands")
	}
	for _, d := range []*string{&o.ConversationsPath, &o.WorkspacePath, &o.BashEventsDir, &o.PersistenceDir} {
		abs, err := filepath.Abs(*d)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		*d = abs
	}
	if err := os.MkdirAll(o.ConversationsPath, 0o755); err != nil {
		return nil, fmt.Errorf("server: conversations directory: %w", err)
	}
	s := &Server{
		opts:    o,
		log:     o.Logger,
		started: time.Now(),
		convs:   make(map[string]*conv),
		stop:    make(chan struct{}),

		endedGrace: 2 * time.Second,
	}
	if o.SecretKey != "" {
		s.cipher = secret.NewCipher(o.SecretKey).WithPrevious(o.PreviousSecretKeys...)
	}
	s.settings = userstore.OpenSettings(o.PersistenceDir, s.cipher)
	s.secrets = userstore.OpenSecrets(o.PersistenceDir, s.cipher)
	s.workspaces = userstore.OpenWorkspaces(o.PersistenceDir)
	s.profiles = userstore.OpenProfiles(o.PersistenceDir, s.cipher)
	s.metaProfiles = userstore.OpenMetaProfiles(o.PersistenceDir)
	s.agentProfiles = userstore.OpenAgentProfiles(o.PersistenceDir)
	s.connections = userstore.OpenConnections(o.PersistenceDir, s.cipher)
	if s.cipher != nil && s.cipher.HasPrevious() {
		// A rotated key does not wait for the next write; a store that no
		// key reads is left as it is, readable once its key is back.
		for name, re := range map[string]func() (bool, error){"settings": s.settings.Reencrypt, "secrets": s.secrets.Reencrypt} {
			if done, err := re(); err != nil {
				s.log.Error("could not re-encrypt a store under the current key", "store", name, "err", err)
			} else if done {
				s.log.Info("re-encrypted a store under the current key", "store", name)
			}
		}
	}
	re, err := compileCORS(o.AllowCORSOriginRegex)
	if err != nil {
		return nil, fmt.Errorf("server: allow_cors_origin_regex: %w", err)
	}
	s.corsRegex = re
	s.active.Store(time.Now().UnixNano())
	for _, spec := range o.Webhooks {
		// The receiver (the OpenHands app) knows the server by its key,
		// as the reference sends it: the first session key.
		if spec.SessionAPIKey == "" && len(o.SessionAPIKeys) > 0 {
			spec.SessionAPIKey = o.SessionAPIKeys[0]
		}
		s.hooks = append(s.hooks, newWebhook(spec, s.log))
	}
	s.bash = newBashService(o.BashEventsDir, s.log)
	s.cat = dirCatalog{root: o.ConversationsPath}
	if o.Postgres != nil {
		s.cat = pgCatalog{b: o.Postgres}
	}
	if err := s.loadStored(context.Background()); err != nil {
		return nil, err
	}
	s.handler = s.buildHandler()
	if o.IdleTTL > 0 {
		s.janitor.Add(1)
		go s.evictLoop()
	}
	if o.Postgres != nil {
		s.janitor.Add(1)
		go s.sweepLoop()
	}
	if o.InternalURL != "" {
		s.internal.use(s, o.InternalURL)
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.active.Store(time.Now().UnixNano())
	s.internal.learn(s, r)
	answered, trusted := s.cors(w, r)
	if answered {
		return
	}
	if status, detail := s.sameOrigin(r, trusted); status != 0 {
		writeDetail(w, status, detail)
		return
	}
	if s.opts.Postgres != nil && r.Header.Get(forwardedHeader) == "" && !readOnly(r) {
		if id := conversationPath(r.URL.Path); id != "" {
			if target := s.owner(r.Context(), id); target != "" {
				s.forward(w, r, target)
				return
			}
		}
	}
	s.handler.ServeHTTP(w, r)
}

// Drain makes the server refuse new conversations and runs with 503 from
// now on, before Close pauses what runs: a supervisor's stop is not a
// moment to start work.
func (s *Server) Drain() { s.closing.Store(true) }

// Close pauses the running conversations, waits for their runs to end,
// persists and releases every conversation, and flushes the webhooks. ctx
// bounds the wait.
func (s *Server) Close(ctx context.Context) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	defer s.internal.release()
	s.closing.Store(true)
	close(s.stop)
	s.janitor.Wait()
	s.mu.RLock()
	convs := make([]*conv, 0, len(s.convs))
	for _, c := range s.convs {
		convs = append(convs, c)
	}
	s.mu.RUnlock()
	for _, c := range convs {
		c.pauseForShutdown()
	}
	done := make(chan struct{})
	go func() { s.runWG.Wait(); close(done) }()
	var errs []error
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("server: waiting for runs to pause: %w", ctx.Err()))
	}
	// Release in parallel: each close writes its state.
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, c := range convs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.unload(true); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.bash.close()
	for _, h := range s.hooks {
		h.close(ctx)
	}
	s.closeErr = errors.Join(errs...)
	return s.closeErr
}

// authorized reports whether key is one of the session keys, comparing in
// constant time. Without session keys every request is authorized.
func (s *Server) authorized(key string) bool {
	if len(s.opts.SessionAPIKeys) == 0 {
		return true
	}
	ok := 0
	for _, k := range s.opts.SessionAPIKeys {
		ok |= subtle.ConstantTimeCompare([]byte(k), []byte(key))
	}
	return ok == 1
}

// requireKey wraps h with the X-Session-API-Key check.
func (s *Server) requireKey(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r.Header.Get("X-Session-API-Key")) {
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		h.ServeHTTP(w, r)
	})
}
