package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/server/userstore"
)

// Configuration sources, as the reference names them.
const (
	// ConfigPathEnv names the JSON configuration file.
	ConfigPathEnv = "OPENHANDS_AGENT_SERVER_CONFIG_PATH"
	// DefaultConfigPath is the configuration file read when ConfigPathEnv
	// is unset; a missing file is no error.
	DefaultConfigPath = "workspace/openhands_agent_server_config.json"
)

// fileConfig is the reference's agent-server Config, as JSON. Keys this
// server does not use are ignored.
type fileConfig struct {
	SessionAPIKeys             []string      `json:"session_api_keys"`
	ConversationsPath          string        `json:"conversations_path"`
	WorkspacePath              string        `json:"workspace_path"`
	BashEventsDir              string        `json:"bash_events_dir"`
	ConversationWorktreeRoot   string        `json:"conversation_worktree_root"`
	Webhooks                   []WebhookSpec `json:"webhooks"`
	MaxConcurrentRuns          *int          `json:"max_concurrent_runs"`
	SecretKey                  *string       `json:"secret_key"`
	PreviousSecretKeys         []string      `json:"previous_secret_keys"`
	AllowCORSOrigins           []string      `json:"allow_cors_origins"`
	AllowCORSOriginRegex       *string       `json:"allow_cors_origin_regex"`
	DeferredInit               bool          `json:"deferred_init"`
	ConversationIdleTTLSeconds *float64      `json:"conversation_idle_ttl_seconds"`
	idleTTLNull                bool

	RegisteredMarketplaces []plugin.Registration `json:"registered_marketplaces"`
}

// LoadConfig reads the server's options as the reference reads its
// configuration: the JSON file at path (or $OPENHANDS_AGENT_SERVER_CONFIG_PATH,
// or workspace/openhands_agent_server_config.json; a missing default file
// is no error), overridden by OH_* environment variables:
//
//	OH_SESSION_API_KEYS_0, _1, ...   session keys (legacy: SESSION_API_KEY)
//	OH_CONVERSATIONS_PATH            conversations directory
//	OH_WORKSPACE_PATH                default workspace directory
//	OH_BASH_EVENTS_DIR               bash events directory
//	OH_CONVERSATION_WORKTREE_ROOT    root of conversations' git worktrees
//	OH_MAX_CONCURRENT_RUNS           conversations running at once
//	OH_SECRET_KEY                    key encrypting secrets at rest
//	OH_PREVIOUS_SECRET_KEYS          earlier keys, only to decrypt (a JSON
//	                                 list, or _0, _1, ...)
//	OH_PERSISTENCE_DIR               settings, secrets and saved workspaces
//	                                 (default ~/.openhands)
//	OH_ALLOW_CORS_ORIGINS            browser origins allowed (a JSON list,
//	                                 or _0, _1, ...)
//	OH_ALLOW_CORS_ORIGIN_REGEX       a pattern of more allowed origins
//	OH_DEFERRED_INIT                 start dormant until POST /api/init
//	OH_CONVERSATION_IDLE_TTL_SECONDS idle seconds before release ("null": never)
//	OH_REGISTERED_MARKETPLACES       marketplaces POST /api/skills loads
//	                                 besides the request's (a JSON list)
//	OH_OPENAI_SUBSCRIPTION_ISSUER    the ChatGPT login's OAuth issuer (gohands
//	                                 only: the reference's is fixed)
//	OH_WEBHOOKS_0_BASE_URL, ...      webhooks (also _HEADERS as JSON,
//	                                 _EVENT_BUFFER_SIZE, _FLUSH_DELAY,
//	                                 _NUM_RETRIES, _RETRY_DELAY)
//
// getenv is os.Getenv in a program.
func LoadConfig(path string, getenv func(string) string) (*Options, error) {
	explicit := path != ""
	if path == "" {
		path = getenv(ConfigPathEnv)
		explicit = path != ""
	}
	if path == "" {
		path = DefaultConfigPath
	}
	var fc fileConfig
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("config %s: must be a JSON object: %w", path, err)
		}
		if err := json.Unmarshal(data, &fc); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		if v, ok := raw["conversation_idle_ttl_seconds"]; ok && isNull(v) {
			fc.idleTTLNull = true
		}
	case errors.Is(err, os.ErrNotExist) && !explicit:
	default:
		return nil, fmt.Errorf("config: %w", err)
	}
	o := &Options{
		SessionAPIKeys:    fc.SessionAPIKeys,
		ConversationsPath: fc.ConversationsPath,
		WorkspacePath:     fc.WorkspacePath,
		BashEventsDir:     fc.BashEventsDir,

		ConversationWorktreeRoot: fc.ConversationWorktreeRoot,
		Webhooks:                 fc.Webhooks,

		PreviousSecretKeys: fc.PreviousSecretKeys,
		AllowCORSOrigins:   fc.AllowCORSOrigins,
	}
	if fc.AllowCORSOriginRegex != nil {
		o.AllowCORSOriginRegex = *fc.AllowCORSOriginRegex
	}
	for env, dst := range map[string]*[]string{"OH_PREVIOUS_SECRET_KEYS": &o.PreviousSecretKeys, "OH_ALLOW_CORS_ORIGINS": &o.AllowCORSOrigins} {
		l, err := envList(env, getenv)
		if err != nil {
			return nil, err
		}
		if l != nil {
			*dst = l
		}
	}
	o.DeferredInit = fc.DeferredInit
	o.RegisteredMarketplaces = fc.RegisteredMarketplaces
	if v := getenv("OH_REGISTERED_MARKETPLACES"); v != "" {
		if err := json.Unmarshal([]byte(v), &o.RegisteredMarketplaces); err != nil {
			return nil, fmt.Errorf("OH_REGISTERED_MARKETPLACES: want a JSON list of {name, source, ref, repo_path, auto_load}: %w", err)
		}
	}
	o.OpenAIIssuer = getenv("OH_OPENAI_SUBSCRIPTION_ISSUER")
	if v := getenv("OH_DEFERRED_INIT"); v != "" {
		b, ok := parseBool(v)
		if !ok {
			return nil, fmt.Errorf("OH_DEFERRED_INIT=%q: want true or false", v)
		}
		o.DeferredInit = b
	}
	if v := getenv("OH_ALLOW_CORS_ORIGIN_REGEX"); v != "" {
		o.AllowCORSOriginRegex = v
	}
	if o.PersistenceDir, err = userstore.Dir(getenv); err != nil {
		return nil, err
	}
	if fc.MaxConcurrentRuns != nil {
		o.MaxConcurrentRuns = *fc.MaxConcurrentRuns
	}
	if fc.SecretKey != nil {
		o.SecretKey = *fc.SecretKey
	}
	if fc.idleTTLNull {
		o.IdleTTL = -1
	} else if fc.ConversationIdleTTLSeconds != nil {
		o.IdleTTL = time.Duration(*fc.ConversationIdleTTLSeconds * float64(time.Second))
	}

	// The environment overrides the file.
	var keys []string
	for i := 0; ; i++ {
		k := getenv("OH_SESSION_API_KEYS_" + strconv.Itoa(i))
		if k == "" {
			break
		}
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		o.SessionAPIKeys = keys
	} else if len(o.SessionAPIKeys) == 0 {
		if k := getenv("SESSION_API_KEY"); k != "" {
			o.SessionAPIKeys = []string{k}
		}
	}
	for env, dst := range map[string]*string{
		"OH_CONVERSATIONS_PATH":         &o.ConversationsPath,
		"OH_WORKSPACE_PATH":             &o.WorkspacePath,
		"OH_BASH_EVENTS_DIR":            &o.BashEventsDir,
		"OH_CONVERSATION_WORKTREE_ROOT": &o.ConversationWorktreeRoot,
		"OH_SECRET_KEY":                 &o.SecretKey,
	} {
		if v := getenv(env); v != "" {
			*dst = v
		}
	}
	if v := getenv("OH_MAX_CONCURRENT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("OH_MAX_CONCURRENT_RUNS=%q: want an integer ≥ 1", v)
		}
		o.MaxConcurrentRuns = n
	}
	if v := getenv("OH_CONVERSATION_IDLE_TTL_SECONDS"); v != "" {
		if strings.EqualFold(v, "null") || strings.EqualFold(v, "none") {
			o.IdleTTL = -1
		} else {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return nil, fmt.Errorf("OH_CONVERSATION_IDLE_TTL_SECONDS=%q: want seconds > 0 or null", v)
			}
			o.IdleTTL = time.Duration(f * float64(time.Second))
		}
	}
	for i := 0; ; i++ {
		p := "OH_WEBHOOKS_" + strconv.Itoa(i) + "_"
		base := getenv(p + "BASE_URL")
		if base == "" {
			break
		}
		if i == 0 {
			o.Webhooks = nil
		}
		spec := WebhookSpec{BaseURL: base}
		if h := getenv(p + "HEADERS"); h != "" {
			if err := json.Unmarshal([]byte(h), &spec.Headers); err != nil {
				return nil, fmt.Errorf("%sHEADERS: want a JSON object: %w", p, err)
			}
		}
		ints := map[string]*int{"EVENT_BUFFER_SIZE": &spec.EventBufferSize, "MAX_QUEUE_SIZE": &spec.MaxQueueSize}
		for k, dst := range ints {
			if v := getenv(p + k); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("%s%s=%q: want an integer", p, k, v)
				}
				*dst = n
			}
		}
		for k, dst := range map[string]**int{"NUM_RETRIES": &spec.NumRetries, "RETRY_DELAY": &spec.RetryDelay} {
			if v := getenv(p + k); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("%s%s=%q: want an integer ≥ 0", p, k, v)
				}
				*dst = &n
			}
		}
		if v := getenv(p + "FLUSH_DELAY"); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return nil, fmt.Errorf("%sFLUSH_DELAY=%q: want seconds > 0", p, v)
			}
			spec.FlushDelay = f
		}
		o.Webhooks = append(o.Webhooks, spec)
	}
	return o, nil
}

// envList reads a list setting from the environment: NAME as a JSON list,
// else NAME_0, NAME_1, ... It returns nil when neither is set.
func envList(name string, getenv func(string) string) ([]string, error) {
	if v := getenv(name); v != "" {
		var l []string
		if err := json.Unmarshal([]byte(v), &l); err != nil {
			return nil, fmt.Errorf("%s: want a JSON list of strings: %w", name, err)
		}
		return l, nil
	}
	var l []string
	for i := 0; ; i++ {
		v := getenv(name + "_" + strconv.Itoa(i))
		if v == "" {
			return l, nil
		}
		l = append(l, v)
	}
}
