package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/server"
)

// settingsServer is a server with a key whose settings live in dir.
func settingsServer(t *testing.T, dir string, prev ...string) *testServer {
	return newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key", PreviousSecretKeys: prev, PersistenceDir: dir})
}

func (ts *testServer) doHeader(method, path string, body any, hdr map[string]string) (int, []byte, http.Header) {
	ts.t.Helper()
	var r *strings.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	} else {
		r = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, ts.http.URL+path, r)
	req.Header.Set("Content-Type", "application/json")
	if ts.key != "" {
		req.Header.Set("X-Session-API-Key", ts.key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(sb.String()), resp.Header
}

func TestSettingsSecretsRedactedEncryptedAtRest(t *testing.T) {
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	var got map[string]any
	ts.must(200, "GET", "/api/settings", nil, &got)
	as := got["agent_settings"].(map[string]any)
	if as["agent_kind"] != "openhands" || as["llm"].(map[string]any)["model"] == "" || got["llm_api_key_is_set"] != false {
		t.Fatalf("default settings: %v", got)
	}
	ts.must(400, "PATCH", "/api/settings", map[string]any{}, nil)
	const key, tok = "sk-live-0123456789", "mcp-token-abcdef"
	data := ts.must(200, "PATCH", "/api/settings", map[string]any{
		"agent_settings_diff": map[string]any{
			"llm":        map[string]any{"model": "openai/gpt-4o", "api_key": key},
			"mcp_config": map[string]any{"svc": map[string]any{"command": "srv", "env": map[string]any{"TOK": tok}}},
			"bogus":      1,
		},
		"misc_settings_diff": map[string]any{"ui": map[string]any{"theme": "dark"}},
	}, &got)
	if strings.Contains(string(data), key) || strings.Contains(string(data), tok) {
		t.Fatalf("PATCH answered a secret in clear: %s", data)
	}
	as = got["agent_settings"].(map[string]any)
	if as["llm"].(map[string]any)["api_key"] != "**********" || got["llm_api_key_is_set"] != true || as["bogus"] != nil {
		t.Fatalf("after PATCH: %v", got)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), key) || strings.Contains(string(raw), tok) || !strings.Contains(string(raw), `"api_key": "gAAAAA`) {
		t.Fatalf("settings.json holds a secret in clear or no token:\n%s", raw)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "settings.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("settings.json mode %v, want 0600", fi.Mode().Perm())
	}
	// The three exposure modes.
	_, redacted, _ := ts.doHeader("GET", "/api/settings", nil, nil)
	_, enc, _ := ts.doHeader("GET", "/api/settings", nil, map[string]string{"X-Expose-Secrets": "encrypted"})
	_, plain, _ := ts.doHeader("GET", "/api/settings", nil, map[string]string{"X-Expose-Secrets": "plaintext"})
	if strings.Contains(string(redacted), key) || strings.Contains(string(enc), key) || !strings.Contains(string(plain), key) || !strings.Contains(string(plain), tok) {
		t.Fatalf("exposure modes wrong:\nredacted %s\nencrypted %s\nplaintext %s", redacted, enc, plain)
	}
	if st, body, _ := ts.doHeader("GET", "/api/settings", nil, map[string]string{"X-Expose-Secrets": "bogus"}); st != 400 {
		t.Errorf("X-Expose-Secrets: bogus: %d %s", st, body)
	}
	// A client sends back what it got: redacted keeps the key, a token is
	// opened, and a null inside a map removes the entry.
	var encDoc map[string]any
	json.Unmarshal(enc, &encDoc)
	encLLM := encDoc["agent_settings"].(map[string]any)["llm"].(map[string]any)
	ts.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"llm": map[string]any{"api_key": "**********", "temperature": 0.5}}}, nil)
	ts.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"llm": map[string]any{"aws_access_key_id": encLLM["api_key"]}}}, nil)
	ts.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"mcp_config": map[string]any{"svc": map[string]any{"env": map[string]any{"TOK": nil}}}}}, nil)
	_, plain, _ = ts.doHeader("GET", "/api/settings", nil, map[string]string{"X-Expose-Secrets": "plaintext"})
	json.Unmarshal(plain, &got)
	llmGot := got["agent_settings"].(map[string]any)["llm"].(map[string]any)
	if llmGot["api_key"] != key || llmGot["aws_access_key_id"] != key || llmGot["temperature"] != 0.5 {
		t.Errorf("round trip of secrets: %v", llmGot)
	}
	if env := got["agent_settings"].(map[string]any)["mcp_config"].(map[string]any)["svc"].(map[string]any)["env"]; len(env.(map[string]any)) != 0 {
		t.Errorf("null did not remove the env entry: %v", env)
	}
	if got["misc_settings"].(map[string]any)["ui"].(map[string]any)["theme"] != "dark" {
		t.Errorf("misc_settings: %v", got["misc_settings"])
	}
	for _, bad := range []map[string]any{
		{"conversation_settings_diff": map[string]any{"max_iterations": "x"}},
		{"conversation_settings_diff": map[string]any{"max_iterations": nil}},
		{"agent_settings_diff": map[string]any{"llm": map[string]any{"temperature": "hot"}}},
		{"agent_settings_diff": map[string]any{"mcp_config": map[string]any{"x": map[string]any{"transport": "stdio", "args": []any{}}}}},
	} {
		if st, body := ts.do("PATCH", "/api/settings", bad); st != 422 || strings.Contains(string(body), key) {
			t.Errorf("PATCH %v: %d %s", bad, st, body)
		}
	}
	if st, body := ts.do("PATCH", "/api/settings", map[string]any{"agent_settings_diff": []any{}}); st != 422 || !strings.Contains(string(body), "dict_type") {
		t.Errorf("a list diff: %d %s", st, body)
	}
	// A switch of agent kind starts from the other kind's defaults.
	ts.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"agent_kind": "acp"}}, &got)
	if as := got["agent_settings"].(map[string]any); as["acp_server"] != "claude-code" || as["llm"] != nil || got["llm_api_key_is_set"] != false {
		t.Errorf("kind switch: %v", as)
	}
}

func TestSettingsMCPEntries(t *testing.T) {
	ts := settingsServer(t, t.TempDir())
	const p = "/api/settings/mcp/fetch"
	var got map[string]any
	ts.must(201, "POST", p, map[string]any{"command": "uvx", "args": []string{"mcp-server-fetch"}, "env": map[string]string{"K": "v"}}, &got)
	ts.must(409, "POST", p, map[string]any{"command": "uvx"}, nil)
	ts.must(422, "POST", "/api/settings/mcp/other", map[string]any{"transport": "stdio", "args": []string{"x"}}, nil)
	ts.must(422, "POST", "/api/settings/mcp/other", map[string]any{"type": "sse"}, nil)
	// A server that declares no transport is kept as it is, as the
	// reference keeps it.
	ts.must(201, "POST", "/api/settings/mcp/bare", map[string]any{}, nil)
	ts.must(200, "DELETE", "/api/settings/mcp/bare", nil, nil)
	ts.must(200, "PATCH", p, map[string]any{"args": []string{"other"}}, &got)
	srv := got["agent_settings"].(map[string]any)["mcp_config"].(map[string]any)["fetch"].(map[string]any)
	if srv["command"] != "uvx" || srv["args"].([]any)[0] != "other" || srv["env"].(map[string]any)["K"] != "**********" || srv["enabled"] != true {
		t.Errorf("patched entry: %v", srv)
	}
	ts.must(404, "PATCH", "/api/settings/mcp/none", map[string]any{"args": []string{}}, nil)
	ts.must(200, "DELETE", p, nil, &got)
	if mc := got["agent_settings"].(map[string]any)["mcp_config"].(map[string]any); len(mc) != 0 {
		t.Errorf("after DELETE: %v", mc)
	}
	ts.must(404, "DELETE", p, nil, nil)
}

func TestSettingsSchemas(t *testing.T) {
	ts := settingsServer(t, t.TempDir())
	var sch struct {
		ModelName string `json:"model_name"`
		Sections  []struct {
			Key    string `json:"key"`
			Fields []struct {
				Key       string `json:"key"`
				ValueType string `json:"value_type"`
				Default   any    `json:"default"`
				Secret    bool   `json:"secret"`
			} `json:"fields"`
		} `json:"sections"`
	}
	ts.must(200, "GET", "/api/settings/agent-schema", nil, &sch)
	found := map[string]bool{}
	for _, s := range sch.Sections {
		for _, f := range s.Fields {
			found[f.Key] = true
			if f.Key == "llm.api_key" && !f.Secret || f.Key == "llm.model" && f.Secret {
				t.Errorf("%s secret = %v", f.Key, f.Secret)
			}
			if f.Key == "condenser.max_size" && f.Default != 240.0 {
				t.Errorf("condenser.max_size default %v", f.Default)
			}
		}
	}
	for _, k := range []string{"llm.model", "llm.api_key", "mcp_config", "acp_server", "verification.critic_api_key"} {
		if !found[k] {
			t.Errorf("agent schema lacks %s", k)
		}
	}
	ts.must(200, "GET", "/api/settings/conversation-schema", nil, &sch)
	if sch.ModelName != "ConversationSettings" || len(sch.Sections) != 3 {
		t.Errorf("conversation schema: %+v", sch)
	}
}

func TestSecretStore(t *testing.T) {
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	const val = "ghp_supersecret_42"
	var list struct {
		Secrets []map[string]any `json:"secrets"`
	}
	ts.must(200, "GET", "/api/settings/secrets", nil, &list)
	if list.Secrets == nil || len(list.Secrets) != 0 {
		t.Fatalf("empty list: %v", list)
	}
	ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "GH_TOKEN", "value": val, "description": "gh"}, nil)
	ts.must(422, "PUT", "/api/settings/secrets", map[string]any{"name": "1bad", "value": "x"}, nil)
	ts.must(422, "PUT", "/api/settings/secrets", map[string]any{"name": "A", "value": "**********"}, nil)
	ts.must(422, "PUT", "/api/settings/secrets", map[string]any{"name": "A", "value": "  "}, nil)
	ts.must(422, "PUT", "/api/settings/secrets", map[string]any{"name": "A"}, nil)
	data := ts.must(200, "GET", "/api/settings/secrets", nil, &list)
	if len(list.Secrets) != 1 || list.Secrets[0]["name"] != "GH_TOKEN" || strings.Contains(string(data), val) {
		t.Fatalf("list: %s", data)
	}
	st, body, hdr := ts.doHeader("GET", "/api/settings/secrets/GH_TOKEN", nil, nil)
	if st != 200 || string(body) != val || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET value: %d %q %v", st, body, hdr)
	}
	ts.must(404, "GET", "/api/settings/secrets/NOPE", nil, nil)
	ts.must(422, "GET", "/api/settings/secrets/1bad", nil, nil)
	raw, _ := os.ReadFile(filepath.Join(dir, "secrets.json"))
	if strings.Contains(string(raw), val) || !strings.Contains(string(raw), "gAAAAA") {
		t.Fatalf("secrets.json in clear:\n%s", raw)
	}
	// Without the key, the routes answer 401 and say nothing.
	anon := *ts
	anon.key = ""
	if st, body := anon.on(t).do("GET", "/api/settings/secrets/GH_TOKEN", nil); st != 401 || strings.Contains(string(body), val) {
		t.Errorf("no key: %d %s", st, body)
	}
	ts.must(200, "DELETE", "/api/settings/secrets/GH_TOKEN", nil, nil)
	ts.must(404, "DELETE", "/api/settings/secrets/GH_TOKEN", nil, nil)
}

// TestSecretKeyRotation: a server started with a new key and the old one
// in PreviousSecretKeys reads what the old key sealed, re-encrypts both
// stores under the new key at start, and a server with only the old key
// then refuses to overwrite them (409/500) rather than lose them.
func TestSecretKeyRotation(t *testing.T) {
	dir := t.TempDir()
	old := newTestServer(t, &server.Options{SessionAPIKeys: []string{"s"}, SecretKey: "old key", PersistenceDir: dir})
	old.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "TOKEN", "value": "v1"}, nil)
	old.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"llm": map[string]any{"api_key": "sk-1"}}}, nil)
	before, _ := os.ReadFile(filepath.Join(dir, "secrets.json"))

	cur := newTestServer(t, &server.Options{SessionAPIKeys: []string{"s"}, SecretKey: "new key", PreviousSecretKeys: []string{"old key"}, PersistenceDir: dir})
	after, _ := os.ReadFile(filepath.Join(dir, "secrets.json"))
	if string(before) == string(after) {
		t.Fatal("secrets.json was not re-encrypted at start")
	}
	if _, body := cur.do("GET", "/api/settings/secrets/TOKEN", nil); string(body) != "v1" {
		t.Errorf("after rotation: %q", body)
	}
	_, plain, _ := cur.doHeader("GET", "/api/settings", nil, map[string]string{"X-Expose-Secrets": "plaintext"})
	if !strings.Contains(string(plain), `"api_key":"sk-1"`) {
		t.Errorf("settings after rotation: %s", plain)
	}
	// Only the new key reads the files now; the old one must not clobber them.
	stale := newTestServer(t, &server.Options{SessionAPIKeys: []string{"s"}, SecretKey: "old key", PersistenceDir: dir})
	stale.must(500, "PUT", "/api/settings/secrets", map[string]any{"name": "OTHER", "value": "v"}, nil)
	stale.must(409, "PATCH", "/api/settings", map[string]any{"misc_settings_diff": map[string]any{"a": 1}}, nil)
	if _, body := cur.do("GET", "/api/settings/secrets/TOKEN", nil); string(body) != "v1" {
		t.Errorf("the stale server damaged the store: %q", body)
	}
}

func TestSavedWorkspaces(t *testing.T) {
	ts := settingsServer(t, t.TempDir())
	var got map[string]any
	ts.must(200, "GET", "/api/workspaces", nil, &got)
	if len(got["workspaces"].([]any)) != 0 || len(got["workspaceParents"].([]any)) != 0 {
		t.Fatalf("empty: %v", got)
	}
	ws := map[string]any{"id": "/a", "name": "a", "path": "/a", "parentPath": "/"}
	ts.must(200, "POST", "/api/workspaces", map[string]any{"workspaces": []any{ws, ws, map[string]any{"id": "/b", "name": "b", "path": "/b"}}}, &got)
	ts.must(200, "POST", "/api/workspaces", map[string]any{"workspaces": []any{ws}}, &got)
	if l := got["workspaces"].([]any); len(l) != 2 || l[0].(map[string]any)["parentPath"] != "/" {
		t.Fatalf("deduped list: %v", got)
	}
	if _, has := got["workspaces"].([]any)[1].(map[string]any)["parentPath"]; has {
		t.Error("an unset parentPath is answered")
	}
	ts.must(422, "POST", "/api/workspaces", map[string]any{"workspaces": []any{map[string]any{"id": "", "name": "x", "path": "/x"}}}, nil)
	ts.must(422, "POST", "/api/workspaces", map[string]any{}, nil)
	ts.must(200, "POST", "/api/workspaces/parents", map[string]any{"parents": []any{map[string]any{"id": "/p", "name": "p", "path": "/p"}}}, &got)
	ts.must(200, "DELETE", "/api/workspaces?path=/a", nil, nil)
	ts.must(404, "DELETE", "/api/workspaces?path=/a", nil, nil)
	ts.must(422, "DELETE", "/api/workspaces", nil, nil)
	ts.must(200, "DELETE", "/api/workspaces/parents?path=/p", nil, nil)
	ts.must(404, "DELETE", "/api/workspaces/parents?path=/p", nil, nil)
	ts.must(200, "GET", "/api/workspaces", nil, &got)
	if l := got["workspaces"].([]any); len(l) != 1 || l[0].(map[string]any)["path"] != "/b" {
		t.Errorf("after deletes: %v", got)
	}
}

// TestSecretStoreWithReference158: the reference's own store reads the
// secrets and settings gohands sealed, and gohands reads what the
// reference's store wrote, with the same key (the files are shared in
// ~/.openhands).
func TestSecretStoreWithReference158(t *testing.T) {
	py := testenv.Reference158Python(t)
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "FROM_GO", "value": "go-value"}, nil)
	ts.must(200, "PATCH", "/api/settings", map[string]any{"agent_settings_diff": map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "api_key": "sk-go"}}}, nil)
	script := `
import sys
from openhands.agent_server.persistence.store import FileSecretsStore, FileSettingsStore
from openhands.sdk.utils.cipher import Cipher
c = Cipher("the secret key")
s = FileSecretsStore(sys.argv[1], cipher=c)
assert s.get_secret("FROM_GO") == "go-value", s.get_secret("FROM_GO")
st = FileSettingsStore(sys.argv[1], cipher=c).load(strict=True)
assert st is not None, "settings unreadable"
assert st.agent_settings.llm.model == "openai/gpt-4o", st.agent_settings.llm.model
assert st.agent_settings.llm.api_key.get_secret_value() == "sk-go"
s.set_secret("FROM_PY", "py-value", description="py")
print("ok")
`
	cmd := exec.Command(py, "-c", script, dir)
	cmd.Env = append(os.Environ(), "LITELLM_LOCAL_MODEL_COST_MAP=True")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("reference store: %v\n%s", err, out)
	}
	if _, body := ts.do("GET", "/api/settings/secrets/FROM_PY", nil); string(body) != "py-value" {
		t.Errorf("gohands reads the reference's secret as %q", body)
	}
	if _, body := ts.do("GET", "/api/settings/secrets/FROM_GO", nil); string(body) != "go-value" {
		t.Errorf("after the reference's write: %q", body)
	}
}

// TestSecretsScopedByProfile: ?agent_profile_id lists only the secrets
// the profile's secret_refs name, all of them for a profile without
// secret_refs, and 404 for an unknown profile, as the reference does.
func TestSecretsScopedByProfile(t *testing.T) {
	t.Parallel()
	ts := settingsServer(t, t.TempDir())
	for _, n := range []string{"GH_TOKEN", "NPM_TOKEN", "PYPI_TOKEN"} {
		ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": n, "value": "v-" + n}, nil)
	}
	ts.must(201, "POST", "/api/agent-profiles/scoped", map[string]any{"llm_profile_ref": "fast", "secret_refs": []string{"NPM_TOKEN", "GONE"}}, nil)
	ts.must(201, "POST", "/api/agent-profiles/open", map[string]any{"llm_profile_ref": "fast"}, nil)
	idOf := func(name string) string {
		var det struct {
			Profile map[string]any `json:"profile"`
		}
		ts.must(200, "GET", "/api/agent-profiles/"+name, nil, &det)
		return det.Profile["id"].(string)
	}
	names := func(query string) []string {
		var list struct {
			Secrets []struct{ Name string } `json:"secrets"`
		}
		ts.must(200, "GET", "/api/settings/secrets"+query, nil, &list)
		var out []string
		for _, s := range list.Secrets {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names("?agent_profile_id=" + idOf("scoped")); !slices.Equal(got, []string{"NPM_TOKEN"}) {
		t.Errorf("scoped by secret_refs: %v, want [NPM_TOKEN]", got)
	}
	if got := names("?agent_profile_id=" + idOf("open")); len(got) != 3 {
		t.Errorf("a profile without secret_refs: %v, want all three", got)
	}
	ts.must(404, "GET", "/api/settings/secrets?agent_profile_id=nope", nil, nil)
}
