package userstore

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// Schema versions of the documents this package writes, the reference's.
const (
	SettingsSchemaVersion      = 6 // settings.json
	AgentSettingsSchemaVersion = 9 // its agent_settings
	ConvSettingsSchemaVersion  = 1 // its conversation_settings
)

// DefaultSettingsModel is the model of the default agent settings (the
// reference 1.58.2 server's).
const DefaultSettingsModel = "gpt-5.6"

// Doc is the user's settings: the agent the app starts conversations
// with, the conversations' own settings, which profiles are active, and
// misc_settings, which belongs to the app and is kept as sent. The two
// settings objects are JSON trees (map[string]any, json.Number numbers)
// with every key of their defaults.
type Doc struct {
	AgentSettings        map[string]any `json:"agent_settings"`
	ConversationSettings map[string]any `json:"conversation_settings"`
	ActiveProfile        *string        `json:"active_profile"`
	ActiveAgentProfileID *string        `json:"active_agent_profile_id"`
	ActiveMetaProfile    *string        `json:"active_meta_profile"`
	MiscSettings         map[string]any `json:"misc_settings"`
}

// DefaultDoc returns the settings of a user who has set nothing.
func DefaultDoc() *Doc {
	return &Doc{
		AgentSettings:        DefaultAgentSettings("openhands"),
		ConversationSettings: DefaultConversationSettings(),
		MiscSettings:         map[string]any{},
	}
}

// DefaultAgentSettings returns the default agent settings of kind
// ("openhands" or "acp"), as the reference's defaults.
func DefaultAgentSettings(kind string) map[string]any {
	if kind == "acp" {
		return map[string]any{
			"schema_version":       num(AgentSettingsSchemaVersion),
			"agent_kind":           "acp",
			"acp_server":           "claude-code",
			"acp_command":          []any{},
			"acp_args":             []any{},
			"acp_model":            nil,
			"acp_session_mode":     nil,
			"acp_prompt_timeout":   json.Number("1800.0"),
			"acp_startup_timeout":  json.Number("90.0"),
			"mcp_config":           map[string]any{},
			"acp_isolate_data_dir": false,
			"acp_file_secrets":     nil,
			"agent_context":        nil,
		}
	}
	var lc map[string]any
	b, _ := llm.DefaultConfig(DefaultSettingsModel).MarshalJSON()
	if err := decode(b, &lc); err != nil {
		panic(err) // the default config always encodes
	}
	return map[string]any{
		"schema_version":                      num(AgentSettingsSchemaVersion),
		"agent_kind":                          "openhands",
		"agent":                               "CodeActAgent",
		"llm":                                 lc,
		"tools":                               nil,
		"enable_classify_and_switch_llm_tool": false,
		"active_meta_profile":                 nil,
		"meta_profile":                        nil,
		"meta_profile_llms":                   map[string]any{},
		"tool_concurrency_limit":              num(1),
		"mcp_config":                          map[string]any{},
		"persona":                             nil,
		"agent_context": map[string]any{
			"skills":                  []any{},
			"system_message_suffix":   nil,
			"user_message_suffix":     nil,
			"load_user_skills":        false,
			"load_public_skills":      false,
			"marketplace_path":        "marketplaces/default.json",
			"registered_marketplaces": []any{},
			"load_project_skills":     false,
			"load_memory":             false,
			"disabled_skills":         []any{},
			"secrets":                 nil,
		},
		"condenser": map[string]any{
			"condenser_kind":                     "llm_summarizing",
			"enabled":                            true,
			"max_size":                           num(240),
			"max_tokens":                         nil,
			"keep_first":                         num(2),
			"minimum_progress":                   json.Number("0.1"),
			"hard_context_reset_max_retries":     num(5),
			"hard_context_reset_context_scaling": json.Number("0.8"),
		},
		"verification": map[string]any{
			"critic_enabled":              false,
			"critic_mode":                 "finish_and_message",
			"enable_iterative_refinement": false,
			"critic_threshold":            json.Number("0.6"),
			"max_refinement_iterations":   num(3),
			"critic_server_url":           nil,
			"critic_model_name":           nil,
			"critic_api_key":              nil,
		},
	}
}

// DefaultConversationSettings returns the default conversation settings.
func DefaultConversationSettings() map[string]any {
	return map[string]any{
		"schema_version":         num(ConvSettingsSchemaVersion),
		"max_iterations":         num(500),
		"confirmation_mode":      false,
		"security_analyzer":      "llm",
		"default_runtime":        "local",
		"worktree_base":          "default_branch",
		"worktree_base_ref":      nil,
		"worktree_branch_prefix": "openhands/",
		"container_memory":       nil,
		"container_cpus":         nil,
		"container_browser":      true,
	}
}

func num(n int) json.Number { return json.Number(fmt.Sprint(n)) }

// Fill returns v completed from def: keys def has and v lacks take def's
// value, and an object whose default has keys (a model, not a free map
// such as mcp_config) keeps only the keys its default has, as the
// reference drops unknown fields.
func Fill(v, def map[string]any) map[string]any {
	out := make(map[string]any, len(def))
	for k, d := range def {
		cur, ok := v[k]
		if !ok {
			out[k] = clone(d)
			continue
		}
		dm, dIsMap := d.(map[string]any)
		cm, cIsMap := cur.(map[string]any)
		if dIsMap && cIsMap && len(dm) > 0 {
			out[k] = Fill(cm, dm)
		} else {
			out[k] = cur
		}
	}
	return out
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// Clone returns a deep copy of a JSON tree.
func Clone(m map[string]any) map[string]any { return clone(m).(map[string]any) }

// secretKeys are the names of secret fields wherever they are (an LLM's
// keys, the critic's).
var secretKeys = map[string]bool{
	"api_key": true, "aws_access_key_id": true, "aws_secret_access_key": true,
	"aws_session_token": true, "critic_api_key": true,
}

// IsSecretPath reports whether the field at path (from agent_settings) holds
// a secret: a key field, an MCP server's environment variable or header,
// or a secret of the agent context.
func IsSecretPath(path []string) bool {
	n := len(path)
	switch {
	case n == 0:
		return false
	case secretKeys[path[n-1]]:
		return true
	case n == 4 && path[0] == "mcp_config" && (path[2] == "env" || path[2] == "headers"):
		return true
	case n >= 4 && path[0] == "mcp_config" && path[2] == "auth":
		return isMCPAuthSecret(path[3:])
	case n == 3 && path[0] == "agent_context" && path[1] == "secrets":
		return true
	}
	return false
}

// isMCPAuthSecret reports whether the field at path (below an MCP server's
// auth) holds a secret: a credential's value, password or headers, the
// OAuth client secret, and the OAuth state's tokens and client secret.
func isMCPAuthSecret(path []string) bool {
	switch strings.Join(path, "/") {
	case "value", "password", "authentication/client_secret",
		"state/tokens/access_token", "state/tokens/refresh_token", "state/client_info/client_secret":
		return true
	}
	return len(path) == 2 && path[0] == "headers"
}

// MapSecrets returns a copy of the agent settings tree with f applied to
// each secret value (a non-empty string at a secret path).
func MapSecrets(m map[string]any, f func(path []string, v string) (any, error)) (map[string]any, error) {
	var walk func(path []string, v any) (any, error)
	walk = func(path []string, v any) (any, error) {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, e := range v {
				w, err := walk(append(path[:len(path):len(path)], k), e)
				if err != nil {
					return nil, err
				}
				out[k] = w
			}
			return out, nil
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				w, err := walk(path, e)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		case string:
			if v != "" && IsSecretPath(path) {
				return f(path, v)
			}
		}
		return v, nil
	}
	out, err := walk(nil, m)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// Redact returns the agent settings with every secret shown as Redacted.
func Redact(m map[string]any) map[string]any {
	out, _ := MapSecrets(m, func([]string, string) (any, error) { return Redacted, nil })
	return out
}

// HasSecret reports whether the agent settings hold any secret value.
func HasSecret(m map[string]any) bool {
	found := false
	MapSecrets(m, func([]string, string) (any, error) { found = true; return nil, nil })
	return found
}

// Settings is the store of settings.json.
type Settings struct {
	f      file
	cipher *secret.Cipher
}

// OpenSettings returns the store of settings.json in dir; secret values
// are sealed with c (in clear without one).
func OpenSettings(dir string, c *secret.Cipher) *Settings {
	return &Settings{f: file{dir: dir, name: "settings.json"}, cipher: c}
}

// Load returns the settings (the defaults when there is no file, or when
// it cannot be read, as the reference answers). A secret no key
// decrypts reads as null.
func (s *Settings) Load() (*Doc, error) {
	var d *Doc
	err := s.f.locked(func() error {
		var err error
		d, _, err = s.load(false)
		if err == ErrUnreadable {
			d, err = DefaultDoc(), nil
		}
		return err
	})
	return d, err
}

// Update applies fn to the settings and saves them. A file that exists
// but cannot be read (or holds a secret no key decrypts) is not
// overwritten: ErrUnreadable.
func (s *Settings) Update(fn func(*Doc) error) (*Doc, error) {
	var d *Doc
	err := s.f.locked(func() error {
		var err error
		if d, _, err = s.load(true); err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
		return s.save(d)
	})
	return d, err
}

// Reencrypt rewrites settings.json under the current key when a secret in
// it was saved under a previous key, and reports whether it did.
func (s *Settings) Reencrypt() (bool, error) {
	var done bool
	err := s.f.locked(func() error {
		b, err := s.f.read()
		if err != nil || b == nil || !stale(s.cipher, b) {
			return err
		}
		d, _, err := s.load(true)
		if err != nil {
			return err
		}
		done = true
		return s.save(d)
	})
	return done, err
}

func (s *Settings) load(strict bool) (*Doc, bool, error) {
	b, err := s.f.read()
	if err != nil {
		return nil, false, err
	}
	if b == nil {
		return DefaultDoc(), false, nil
	}
	var raw struct {
		SchemaVersion *json.Number `json:"schema_version"`
		Doc
	}
	if err := decode(b, &raw); err != nil {
		return nil, true, ErrUnreadable
	}
	if raw.SchemaVersion != nil {
		if v, err := raw.SchemaVersion.Int64(); err != nil || v > SettingsSchemaVersion {
			return nil, true, ErrUnreadable
		}
	}
	d := raw.Doc
	kind, _ := d.AgentSettings["agent_kind"].(string)
	if kind != "acp" {
		kind = "openhands"
	}
	d.AgentSettings = Fill(d.AgentSettings, DefaultAgentSettings(kind))
	d.AgentSettings["schema_version"] = num(AgentSettingsSchemaVersion)
	d.ConversationSettings = Fill(d.ConversationSettings, DefaultConversationSettings())
	if d.MiscSettings == nil {
		d.MiscSettings = map[string]any{}
	}
	if s.cipher != nil {
		d.AgentSettings, err = MapSecrets(d.AgentSettings, func(_ []string, v string) (any, error) {
			if !strings.HasPrefix(v, "gAAAAA") {
				return v, nil
			}
			pt, err := s.cipher.DecryptString(v)
			if err != nil {
				if strict {
					return nil, ErrUnreadable
				}
				return nil, nil
			}
			return pt, nil
		})
		if err != nil {
			return nil, true, err
		}
	}
	return &d, true, nil
}

func (s *Settings) save(d *Doc) error {
	agent := d.AgentSettings
	if s.cipher != nil {
		var err error
		agent, err = MapSecrets(agent, func(_ []string, v string) (any, error) { return s.cipher.EncryptString(v) })
		if err != nil {
			return err
		}
	}
	out := map[string]any{
		"schema_version":          num(SettingsSchemaVersion),
		"agent_settings":          agent,
		"conversation_settings":   d.ConversationSettings,
		"active_profile":          d.ActiveProfile,
		"active_agent_profile_id": d.ActiveAgentProfileID,
		"active_meta_profile":     d.ActiveMetaProfile,
		"misc_settings":           d.MiscSettings,
	}
	return s.f.write(out)
}

// LLMAPIKeyIsSet reports whether the agent settings have an LLM key.
func (d *Doc) LLMAPIKeyIsSet() bool {
	lc, _ := d.AgentSettings["llm"].(map[string]any)
	k, _ := lc["api_key"].(string)
	return strings.TrimSpace(k) != ""
}
