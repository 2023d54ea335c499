package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// Transport is how a client reaches an MCP server.
type Transport string

// Transports, spelled as the reference spells them. TransportHTTP and
// TransportStreamableHTTP are the same protocol (streamable HTTP).
const (
	TransportStdio          Transport = "stdio"
	TransportHTTP           Transport = "http"
	TransportStreamableHTTP Transport = "streamable-http"
	TransportSSE            Transport = "sse"
)

// Config maps server names to servers: the reference's mcp_config, which is
// the "mcpServers" map of the common MCP client configuration file. It
// encodes as {} when empty and decodes either the bare map or the
// {"mcpServers": {...}} wrapper. Decoding validates every server.
type Config map[string]Server

// Server is one MCP server: a program to start (Command, stdio) or a URL to
// connect to (SSE or streamable HTTP). The zero value of every field means
// "not set"; in particular a zero Server is enabled, and Timeout 0 means no
// per-call limit beyond the caller's context.
type Server struct {
	URL       string                   `json:"url,omitempty"`
	Transport Transport                `json:"transport,omitempty"` // empty: inferred, see EffectiveTransport
	Command   string                   `json:"command,omitempty"`
	Args      []string                 `json:"args,omitempty"`
	Env       map[string]secret.String `json:"env,omitempty"`
	Cwd       string                   `json:"cwd,omitempty"`

	Description string `json:"description,omitempty"`
	Icon        string `json:"icon,omitempty"`

	// Timeout bounds each tool call (the reference's "timeout", seconds).
	Timeout time.Duration `json:"timeout,omitzero" wire:"format:sec"`
	// SSEReadTimeout is kept for the wire format; the go-sdk has no
	// separate read timeout, so it is not applied.
	SSEReadTimeout time.Duration `json:"sse_read_timeout,omitzero" wire:"format:sec"`
	KeepAlive      *bool         `json:"keep_alive,omitempty"`

	// Headers are sent with every HTTP request to a remote server.
	Headers map[string]secret.String `json:"headers,omitempty"`
	Auth    *Auth                    `json:"auth,omitempty"`

	// Disabled servers stay configured but are not connected. It is
	// written as the reference's "enabled" (default true); see MarshalJSON.
	Disabled bool `json:"-"`
}

// Auth strategies (Auth.Strategy).
const (
	AuthNone   = "none"
	AuthAPIKey = "api_key"
	AuthBearer = "bearer"
	AuthBasic  = "basic"
	AuthHeader = "header"
	AuthOAuth2 = "oauth2"
)

// Auth is a remote server's credential, a union keyed by Strategy:
// "api_key" uses Value and HeaderName (default: Authorization: Bearer),
// "bearer" uses Value, "basic" uses Username and Password, "header" uses
// Headers, "none" nothing. "oauth2" (streamable HTTP servers) uses the
// OAuth settings of OAuth and the tokens of State; see OAuthOptions.
type Auth struct {
	Strategy   string                   `json:"strategy"`
	Value      secret.String            `json:"value,omitzero"`
	HeaderName string                   `json:"header_name,omitempty"`
	Username   string                   `json:"username,omitempty"`
	Password   secret.String            `json:"password,omitzero"`
	Headers    map[string]secret.String `json:"headers,omitempty"`
	// OAuth holds the oauth2 strategy's "authentication" object.
	OAuth *OAuthSettings `json:"authentication,omitempty"`
	// State holds the oauth2 strategy's tokens and client registration.
	State *OAuthState `json:"state,omitempty"`
}

// OAuthSettings is the "authentication" object of an oauth2 credential.
type OAuthSettings struct {
	Type                     string         `json:"type"`
	ClientAuthMethod         string         `json:"client_auth_method,omitempty"`
	Scopes                   any            `json:"scopes,omitempty"` // string or list of strings
	ClientName               string         `json:"client_name,omitempty"`
	ClientMetadataURL        string         `json:"client_metadata_url,omitempty"`
	ClientID                 string         `json:"client_id,omitempty"`
	ClientSecret             secret.String  `json:"client_secret,omitzero"`
	AdditionalClientMetadata map[string]any `json:"additional_client_metadata,omitempty"`
}

// EffectiveTransport returns the transport used to reach s: Transport if
// set, else stdio when there is a command, else SSE when the URL's path
// ends in /sse (as FastMCP infers it), else streamable HTTP.
func (s *Server) EffectiveTransport() Transport {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.Command != "":
		return TransportStdio
	case s.URL != "":
		if u, err := url.Parse(s.URL); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse") {
			return TransportSSE
		}
		return TransportHTTP
	}
	return ""
}

// Validate reports whether s can be connected to, as the reference checks
// it: stdio needs a command, remote transports a URL, and auth cannot be
// combined with an explicit Authorization header.
func (s *Server) Validate() error {
	switch s.Transport {
	case "", TransportStdio, TransportHTTP, TransportStreamableHTTP, TransportSSE:
	default:
		return fmt.Errorf("transport %q is not one of stdio, http, streamable-http, sse", s.Transport)
	}
	switch s.EffectiveTransport() {
	case TransportStdio:
		if s.Command == "" {
			return errors.New("stdio MCP servers require 'command'")
		}
	case TransportHTTP, TransportStreamableHTTP, TransportSSE:
		if s.URL == "" {
			return errors.New("remote MCP servers require 'url'")
		}
		if _, err := url.Parse(s.URL); err != nil {
			return fmt.Errorf("url: %w", err)
		}
	default:
		return errors.New("an MCP server needs a 'command' or a 'url'")
	}
	if s.Auth != nil {
		for k := range s.Headers {
			if strings.EqualFold(k, "authorization") {
				return errors.New("'auth' cannot be combined with an explicit 'Authorization' header; use auth strategy 'header'")
			}
		}
		switch s.Auth.Strategy {
		case AuthNone, AuthAPIKey, AuthBearer, AuthOAuth2, AuthHeader:
		case AuthBasic:
			if s.Auth.Username == "" {
				return errors.New("auth strategy 'basic' requires 'username'")
			}
		default:
			return fmt.Errorf("auth strategy %q is not one of none, api_key, bearer, basic, header, oauth2", s.Auth.Strategy)
		}
	}
	return nil
}

// Validate validates every server; the error names the first bad one (in
// name order).
func (c Config) Validate() error {
	for _, name := range slices.Sorted(maps.Keys(c)) {
		s := c[name]
		if err := s.Validate(); err != nil {
			return fmt.Errorf("mcp server %q: %w", name, err)
		}
	}
	return nil
}

// Enabled returns the servers that are not disabled.
func (c Config) Enabled() Config {
	out := make(Config, len(c))
	for name, s := range c {
		if !s.Disabled {
			out[name] = s
		}
	}
	return out
}

// MarshalJSON implements json.Marshaler: {} when empty.
func (c Config) MarshalJSON() ([]byte, error) {
	return event.MarshalJSON(event.Map[string, Server](c))
}

// UnmarshalJSON implements json.Unmarshaler. It accepts the bare map and
// the {"mcpServers": {...}} wrapper, and validates every server.
func (c *Config) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("mcp config: %w", err)
	}
	if inner, ok := m["mcpServers"]; ok {
		m = nil
		if err := json.Unmarshal(inner, &m); err != nil {
			return fmt.Errorf("mcp config: mcpServers: %w", err)
		}
	}
	out := make(Config, len(m))
	for name, raw := range m {
		var s Server
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("mcp server %q: %w", name, err)
		}
		out[name] = s
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*c = out
	return nil
}

// ParseConfig decodes a configuration in the reference's format (bare map
// or {"mcpServers": ...} wrapper) and validates it.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return Config{}, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadConfigFile reads and validates a configuration file, such as the
// .mcp.json or mcp.json files other MCP clients use.
func LoadConfigFile(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// MapSecrets implements secret.Holder.
func (c Config) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
	out := make(Config, len(c))
	for name, s := range c {
		m, err := s.mapSecrets(f)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", name, err)
		}
		out[name] = m
	}
	return out, nil
}

func (s Server) mapSecrets(f func(secret.String) (secret.String, error)) (Server, error) {
	var err error
	if s.Env, err = mapSecretMap(s.Env, f); err != nil {
		return s, err
	}
	if s.Headers, err = mapSecretMap(s.Headers, f); err != nil {
		return s, err
	}
	s.Args = slices.Clone(s.Args)
	if s.Auth != nil {
		a := *s.Auth
		if a.Value, err = mapOne(f, a.Value); err != nil {
			return s, err
		}
		if a.Password, err = mapOne(f, a.Password); err != nil {
			return s, err
		}
		if a.Headers, err = mapSecretMap(a.Headers, f); err != nil {
			return s, err
		}
		if a.OAuth != nil {
			o := *a.OAuth
			if o.ClientSecret, err = mapOne(f, o.ClientSecret); err != nil {
				return s, err
			}
			a.OAuth = &o
		}
		if a.State, err = a.State.mapSecrets(f); err != nil {
			return s, err
		}
		s.Auth = &a
	}
	return s, nil
}

func mapOne(f func(secret.String) (secret.String, error), v secret.String) (secret.String, error) {
	if v.IsZero() {
		return v, nil
	}
	return f(v)
}

func mapSecretMap(m map[string]secret.String, f func(secret.String) (secret.String, error)) (map[string]secret.String, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]secret.String, len(m))
	for k, v := range m {
		var err error
		if out[k], err = mapOne(f, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MarshalJSON implements json.Marshaler: the fields, then Disabled as the
// reference's "enabled", which is always written. Secret values encode as
// their secret.String does (redacted unless exposed or encrypted).
func (s Server) MarshalJSON() ([]byte, error) {
	type plain Server // the same fields, without these methods
	return event.MarshalJSON(struct {
		plain
		Enabled bool `json:"enabled"`
	}{plain(s), !s.Disabled})
}

// UnmarshalJSON implements json.Unmarshaler. As the reference's loader
// does, it reads "type" as "transport", "shttp" as "http", "enabled" as
// the inverse of Disabled, ignores unknown fields and drops secret values
// that are empty or redacted.
func (s *Server) UnmarshalJSON(data []byte) error {
	type plain Server
	var j struct {
		plain
		Type    Transport `json:"type"`
		Enabled *bool     `json:"enabled"`
	}
	if err := event.UnmarshalJSON(data, &j); err != nil {
		return err
	}
	*s = Server(j.plain)
	if s.Transport == "" {
		s.Transport = j.Type
	}
	if s.Transport == "shttp" {
		s.Transport = TransportHTTP
	}
	s.Env, s.Headers = dropZero(s.Env), dropZero(s.Headers)
	s.Disabled = j.Enabled != nil && !*j.Enabled
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"timeout", s.Timeout}, {"sse_read_timeout", s.SSEReadTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s: %v is not a valid number of seconds", d.key, d.v.Seconds())
		}
	}
	return nil
}

func dropZero(m map[string]secret.String) map[string]secret.String {
	for k, v := range m {
		if v.IsZero() {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// UnmarshalJSON implements json.Unmarshaler: the strategy is required, and
// header values that are empty or redacted are dropped.
func (a *Auth) UnmarshalJSON(data []byte) error {
	type plain Auth // the same fields, without this method
	var j plain
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Strategy == "" {
		return errors.New("auth: 'strategy' is required")
	}
	j.Headers = dropZero(j.Headers)
	if j.State.IsZero() {
		j.State = nil
	}
	*a = Auth(j)
	return nil
}

// headers returns the HTTP headers to send to s: Headers plus those Auth
// implies.
func (s *Server) headers() (map[string]string, error) {
	h := make(map[string]string, len(s.Headers)+1)
	for k, v := range s.Headers {
		h[k] = v.Value()
	}
	if a := s.Auth; a != nil {
		switch a.Strategy {
		case AuthAPIKey:
			switch {
			case a.Value.IsZero():
			case a.HeaderName != "":
				h[a.HeaderName] = a.Value.Value()
			default:
				h["Authorization"] = "Bearer " + a.Value.Value()
			}
		case AuthBearer:
			if !a.Value.IsZero() {
				h["Authorization"] = "Bearer " + a.Value.Value()
			}
		case AuthBasic:
			if !a.Password.IsZero() {
				h["Authorization"] = basicAuth(a.Username, a.Password.Value())
			}
		case AuthHeader:
			for k, v := range a.Headers {
				h[k] = v.Value()
			}
		}
	}
	return h, nil
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}
