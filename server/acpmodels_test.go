package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

func TestACPModels(t *testing.T) {
	t.Parallel()
	py := testenv.Program(t, "python3")
	script, err := filepath.Abs("testdata/acp_models_peer.py")
	if err != nil {
		t.Fatal(err)
	}
	peerLog := filepath.Join(t.TempDir(), "starts")
	ts := settingsServer(t, t.TempDir())
	settings := map[string]any{"agent_kind": "acp", "acp_server": "custom", "acp_command": []string{py, script}, "acp_startup_timeout": 120}
	secrets := map[string]any{
		"PEER_LOG":  map[string]any{"kind": "StaticSecret", "value": peerLog},
		"PEER_AUTH": map[string]any{"kind": "StaticSecret", "value": "secret-credential-1"},
	}
	type discovery struct {
		AgentName       *string `json:"agent_name"`
		AgentVersion    *string `json:"agent_version"`
		CurrentModelID  *string `json:"current_model_id"`
		AvailableModels []struct {
			ModelID     string  `json:"model_id"`
			Name        *string `json:"name"`
			Description *string `json:"description"`
		} `json:"available_models"`
		Switch bool `json:"supports_runtime_model_switch"`
		Error  *struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	var d discovery
	body := ts.must(200, "POST", "/api/acp/models", map[string]any{"agent_settings": settings, "secrets": secrets}, &d)
	if d.Error != nil || *d.AgentName != "peer" || *d.CurrentModelID != "fast" || len(d.AvailableModels) != 2 || d.AvailableModels[1].ModelID != "big" ||
		*d.AvailableModels[1].Description != "Slow" || d.Switch || strings.Contains(string(body), "secret-credential-1") {
		t.Fatalf("discovery: %s", body)
	}
	starts := func() int {
		b, _ := os.ReadFile(peerLog)
		return strings.Count(string(b), "start")
	}
	// The answer is kept; refresh asks the server again.
	ts.must(200, "POST", "/api/acp/models", map[string]any{"agent_settings": settings, "secrets": secrets}, &d)
	if n := starts(); n != 1 {
		t.Errorf("a second discovery started the server again (%d starts)", n)
	}
	ts.must(200, "POST", "/api/acp/models", map[string]any{"agent_settings": settings, "secrets": secrets, "refresh": true}, &d)
	if n := starts(); n != 2 {
		t.Errorf("refresh: %d starts, want 2", n)
	}
	// Without the credential the server refuses the session: the answer
	// says so, with the conversations' error code, and is not kept.
	delete(secrets, "PEER_AUTH")
	for range 2 {
		d = discovery{}
		ts.must(200, "POST", "/api/acp/models", map[string]any{"agent_settings": settings, "secrets": secrets}, &d)
		if d.Error == nil || d.Error.Code != "ACPAuthRequired" || len(d.AvailableModels) != 0 {
			t.Errorf("without credentials: %+v", d)
		}
	}
	if n := starts(); n != 4 {
		t.Errorf("failed discoveries: %d starts, want 4", n)
	}
	d = discovery{}
	ts.must(200, "POST", "/api/acp/models", map[string]any{"agent_settings": map[string]any{"acp_command": []string{filepath.Join(t.TempDir(), "no-such-server")}}}, &d)
	if d.Error == nil || d.Error.Code != "ACPSpawnError" {
		t.Errorf("a command that does not exist: %+v", d)
	}

	for _, bad := range []any{
		map[string]any{},
		map[string]any{"agent_settings": map[string]any{"acp_server": "custom"}},
		map[string]any{"agent_settings": map[string]any{"acp_server": "claude-code"}},
		map[string]any{"agent_settings": map[string]any{"acp_server": "nope", "acp_command": []string{"x"}}},
		map[string]any{"agent_settings": map[string]any{"agent_kind": "openhands", "acp_command": []string{"x"}}},
		"{",
	} {
		if code, body := ts.do("POST", "/api/acp/models", bad); code != 422 {
			t.Errorf("%v: %d %s", bad, code, body)
		}
	}
	ts.key = ""
	if code, _ := ts.do("POST", "/api/acp/models", map[string]any{}); code != 401 {
		t.Errorf("without the key: %d", code)
	}
}
