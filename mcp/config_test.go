package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/secret"
)

func compact(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The fixtures were written by the Python reference (v1.43.1): the input
// coerced with coerce_mcp_config and dumped inside an Agent, redacted and
// with expose_secrets=plaintext.
func TestConfigMatchesReference(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("testdata/reference_config_in.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("testdata/reference_config_out.json")
	if string(got) != compact(t, want) {
		t.Errorf("redacted:\n got %s\nwant %s", got, compact(t, want))
	}
	exposed, err := c.MapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(exposed)
	want, _ = os.ReadFile("testdata/reference_config_plain.json")
	if string(got) != compact(t, want) {
		t.Errorf("plaintext:\n got %s\nwant %s", got, compact(t, want))
	}
	// The original still redacts: MapSecrets copies.
	if b, _ := json.Marshal(c); !strings.Contains(string(b), secret.Redacted) {
		t.Errorf("MapSecrets changed the original: %s", b)
	}
	// Round trip of the plaintext form gives the same config.
	back, err := ParseConfig(got)
	if err != nil {
		t.Fatal(err)
	}
	if back["remote"].Headers["X-Key"].Value() != "k" || back["remote"].Timeout != 30*time.Second || !back["s"].Disabled {
		t.Errorf("round trip lost values: %+v", back)
	}
}

func TestConfigEmpty(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{}`, `{"mcpServers": {}}`, `{"mcpServers": null}`, ``} {
		c, err := ParseConfig([]byte(in))
		if err != nil || len(c) != 0 {
			t.Errorf("ParseConfig(%q) = %v, %v", in, c, err)
		}
	}
	if b, _ := json.Marshal(Config(nil)); string(b) != "{}" {
		t.Errorf("nil Config encodes as %s", b)
	}
}

func TestConfigInvalid(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"x": {"transport": "stdio"}}`:                     `mcp server "x": stdio MCP servers require 'command'`,
		`{"x": {"transport": "sse"}}`:                       `mcp server "x": remote MCP servers require 'url'`,
		`{"x": {}}`:                                         `mcp server "x": an MCP server needs a 'command' or a 'url'`,
		`{"x": {"command": "a", "transport": "websocket"}}`: `transport "websocket" is not one of`,
		`{"x": {"url": "http://a", "headers": {"authorization": "t"}, "auth": {"strategy": "none"}}}`: `'auth' cannot be combined`,
		`{"x": {"url": "http://a", "auth": {"strategy": "magic"}}}`:                                   `auth strategy "magic"`,
		`{"x": {"url": "http://a", "auth": {}}}`:                                                      `'strategy' is required`,
		`{"x": {"command": "a", "timeout": -1}}`:                                                      `timeout: -1`,
		`{"x": {"command": 3}}`:                                                                       `mcp server "x"`,
		`[1]`:                                                                                         `mcp config`,
	} {
		_, err := ParseConfig([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%s) error = %v, want it to contain %q", in, err, want)
		}
	}
}

func TestEffectiveTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Server
		want Transport
	}{
		{Server{Command: "x"}, TransportStdio},
		{Server{URL: "http://h/sse"}, TransportSSE},
		{Server{URL: "http://h/sse/"}, TransportSSE},
		{Server{URL: "http://h/mcp"}, TransportHTTP},
		{Server{URL: "http://h/sse", Transport: TransportStreamableHTTP}, TransportStreamableHTTP},
	} {
		if got := tc.s.EffectiveTransport(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestHeadersFromAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		auth       Auth
		key, value string
	}{
		{Auth{Strategy: AuthBearer, Value: secret.New("t")}, "Authorization", "Bearer t"},
		{Auth{Strategy: AuthAPIKey, Value: secret.New("k")}, "Authorization", "Bearer k"},
		{Auth{Strategy: AuthAPIKey, Value: secret.New("k"), HeaderName: "X-Api-Key"}, "X-Api-Key", "k"},
		{Auth{Strategy: AuthBasic, Username: "u", Password: secret.New("p")}, "Authorization", "Basic dTpw"},
		{Auth{Strategy: AuthHeader, Headers: map[string]secret.String{"X-T": secret.New("v")}}, "X-T", "v"},
	} {
		s := Server{URL: "http://h", Auth: &tc.auth, Headers: map[string]secret.String{"X-Other": secret.New("o")}}
		h, err := s.headers()
		if err != nil || h[tc.key] != tc.value || h["X-Other"] != "o" {
			t.Errorf("%s: headers = %v, %v", tc.auth.Strategy, h, err)
		}
	}
	// oauth2's token is sent by the OAuth handler, not as a fixed header.
	s := Server{URL: "http://h", Auth: &Auth{Strategy: AuthOAuth2}}
	if h, err := s.headers(); err != nil || h["Authorization"] != "" {
		t.Errorf("oauth2: headers = %v, %v", h, err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	os.WriteFile(p, []byte(`{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "env": {"TOKEN": "s3"}}}}`), 0o600)
	c, err := LoadConfigFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := c["fetch"]; s.Command != "uvx" || s.Env["TOKEN"].Value() != "s3" || s.EffectiveTransport() != TransportStdio {
		t.Errorf("loaded %+v", c)
	}
	os.WriteFile(p, []byte(`{"mcpServers": {"bad": {"transport": "stdio"}}}`), 0o600)
	if _, err := LoadConfigFile(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("error %v does not name the file and server", err)
	}
	if _, err := LoadConfigFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
}
