package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

func TestProfilesLifecycle(t *testing.T) {
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	var list protocol.ProfileListResponse
	ts.must(200, "GET", "/api/profiles", nil, &list)
	if list.Profiles == nil || len(list.Profiles) != 0 || list.ActiveProfile != nil {
		t.Fatalf("empty store: %+v", list)
	}
	llmCfg := map[string]any{"model": "openai/gpt-4o", "api_key": "sk-the-key", "base_url": "http://127.0.0.1:9/v1"}
	var mut protocol.ProfileMutationResponse
	ts.must(201, "POST", "/api/profiles/fast", map[string]any{"llm": llmCfg}, &mut)
	if mut.Name != "fast" || mut.Message != "Profile 'fast' saved" {
		t.Errorf("save: %+v", mut)
	}
	// The reference's layout, the key sealed with the server's key.
	raw, err := os.ReadFile(filepath.Join(dir, "profiles", "fast.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk map[string]any
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk["model"] != "openai/gpt-4o" {
		t.Fatalf("profiles/fast.json: %s (%v)", raw, err)
	}
	if strings.Contains(string(raw), "sk-the-key") || !strings.HasPrefix(fmt.Sprint(onDisk["api_key"]), "gAAAAA") {
		t.Errorf("the key is not sealed on disk: %s", raw)
	}
	if fi, err := os.Stat(filepath.Join(dir, "profiles", "fast.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("profile file mode %v (%v)", fi.Mode(), err)
	}

	ts.must(200, "GET", "/api/profiles", nil, &list)
	if len(list.Profiles) != 1 || list.Profiles[0].Name != "fast" || !list.Profiles[0].APIKeySet || *list.Profiles[0].Model != "openai/gpt-4o" {
		t.Fatalf("list: %+v", list)
	}

	// Read: the key null by default, sealed or in clear as asked.
	var det protocol.ProfileDetailResponse
	body := ts.must(200, "GET", "/api/profiles/fast", nil, &det)
	if det.Config["api_key"] != nil || !det.APIKeySet || det.Config["model"] != "openai/gpt-4o" || strings.Contains(string(body), "sk-the-key") {
		t.Errorf("default read: %s", body)
	}
	_, plain, _ := ts.doHeader("GET", "/api/profiles/fast", nil, map[string]string{"X-Expose-Secrets": "plaintext"})
	if !strings.Contains(string(plain), `"api_key":"sk-the-key"`) {
		t.Errorf("plaintext read: %s", plain)
	}
	_, enc, _ := ts.doHeader("GET", "/api/profiles/fast", nil, map[string]string{"X-Expose-Secrets": "encrypted"})
	var encDet protocol.ProfileDetailResponse
	if json.Unmarshal(enc, &encDet) != nil || !strings.HasPrefix(fmt.Sprint(encDet.Config["api_key"]), "gAAAAA") {
		t.Errorf("encrypted read: %s", enc)
	}
	// What the encrypted read shows is accepted back and opened.
	ts.must(201, "POST", "/api/profiles/copy", map[string]any{"llm": encDet.Config}, nil)
	_, plain, _ = ts.doHeader("GET", "/api/profiles/copy", nil, map[string]string{"X-Expose-Secrets": "plaintext"})
	if !strings.Contains(string(plain), `"api_key":"sk-the-key"`) {
		t.Errorf("a sealed key saved back: %s", plain)
	}
	if st, b, _ := ts.doHeader("GET", "/api/profiles/fast", nil, map[string]string{"X-Expose-Secrets": "bogus"}); st != 400 {
		t.Errorf("X-Expose-Secrets: bogus: %d %s", st, b)
	}

	// Activate: the settings' LLM and the active profile.
	var act protocol.ActivateProfileResponse
	ts.must(200, "POST", "/api/profiles/fast/activate", nil, &act)
	if !act.LLMApplied {
		t.Errorf("activate: %+v", act)
	}
	var settings map[string]any
	ts.must(200, "GET", "/api/settings", nil, &settings)
	if m := settings["agent_settings"].(map[string]any)["llm"].(map[string]any); m["model"] != "openai/gpt-4o" || m["base_url"] != "http://127.0.0.1:9/v1" {
		t.Errorf("settings' llm after activation: %v", m)
	}
	// Rename follows the active profile; the old name is gone.
	ts.must(200, "POST", "/api/profiles/fast/rename", map[string]any{"new_name": "quick"}, &mut)
	if mut.Name != "quick" {
		t.Errorf("rename: %+v", mut)
	}
	ts.must(200, "GET", "/api/profiles", nil, &list)
	if list.ActiveProfile == nil || *list.ActiveProfile != "quick" || len(list.Profiles) != 2 {
		t.Errorf("after rename: %+v", list)
	}
	ts.must(404, "GET", "/api/profiles/fast", nil, nil)
	ts.must(404, "POST", "/api/profiles/fast/rename", map[string]any{"new_name": "x"}, nil)
	ts.must(409, "POST", "/api/profiles/quick/rename", map[string]any{"new_name": "copy"}, nil)
	// Delete is idempotent and clears the active profile.
	ts.must(200, "DELETE", "/api/profiles/quick", nil, nil)
	ts.must(200, "DELETE", "/api/profiles/quick", nil, nil)
	ts.must(200, "GET", "/api/profiles", nil, &list)
	if list.ActiveProfile != nil || len(list.Profiles) != 1 {
		t.Errorf("after delete: %+v", list)
	}
	ts.must(404, "POST", "/api/profiles/quick/activate", nil, nil)

	// Without secrets: no key kept.
	ts.must(201, "POST", "/api/profiles/nokey", map[string]any{"llm": llmCfg, "include_secrets": false}, nil)
	ts.must(200, "GET", "/api/profiles/nokey", nil, &det)
	if det.APIKeySet {
		t.Errorf("include_secrets false kept the key")
	}
}

func TestProfilesErrors(t *testing.T) {
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/api/profiles/p", map[string]any{}, 422},                                       // no llm
		{"POST", "/api/profiles/p", "{", 422},                                                    // bad JSON
		{"POST", "/api/profiles/p", map[string]any{"llm": map[string]any{"model": ""}}, 422},     // invalid LLM
		{"POST", "/api/profiles/-bad", map[string]any{"llm": map[string]any{"model": "a"}}, 422}, // bad name
		{"GET", "/api/profiles/.hidden", nil, 422},
		{"POST", "/api/profiles/p/rename", map[string]any{}, 422},
		{"POST", "/api/profiles/p/rename", map[string]any{"new_name": "../x"}, 422},
		{"POST", "/api/profiles/p/validate", map[string]any{}, 422},
		{"GET", "/api/profiles/missing", nil, 404},
	} {
		if st, b := ts.do(c.method, c.path, c.body); st != c.want {
			t.Errorf("%s %s %v: %d %s, want %d", c.method, c.path, c.body, st, b, c.want)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "profiles")); len(ents) > 1 { // the lock file at most
		t.Errorf("refused requests wrote files: %v", ents)
	}
	// The limit: 50 profiles; replacing one is still allowed.
	for i := range 50 {
		ts.must(201, "POST", fmt.Sprintf("/api/profiles/p%d", i), map[string]any{"llm": map[string]any{"model": "openai/gpt-4o"}}, nil)
	}
	ts.must(409, "POST", "/api/profiles/one-more", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o"}}, nil)
	ts.must(201, "POST", "/api/profiles/p0", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o-mini"}}, nil)

	ts.key = ""
	for _, p := range []string{"/api/profiles", "/api/profiles/p0"} {
		if st, b := ts.do("GET", p, nil); st != 401 {
			t.Errorf("GET %s without the key: %d %s", p, st, b)
		}
	}
}

func TestProfileValidate(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	m := llmtest.NewChat(t, llmtest.Reply{Text: "ok"})
	var v protocol.ValidateProfileResponse
	ts.must(200, "POST", "/api/profiles/p/validate", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "api_key": "k", "base_url": m.URL + "/v1"}}, &v)
	if !v.Valid || v.Error != nil {
		t.Errorf("a working model: %+v", v)
	}
	// A provider refusing the key: invalid, the key not echoed.
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-wrong-key-123","type":"invalid_request_error"}}`)
	}))
	defer refuse.Close()
	body := ts.must(200, "POST", "/api/profiles/p/validate", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "api_key": "sk-wrong-key-123", "base_url": refuse.URL + "/v1"}}, &v)
	if v.Valid || v.Error == nil || v.Error.Type != "AuthenticationError" {
		t.Errorf("a refused key: %s", body)
	}
	if strings.Contains(string(body), "sk-wrong-key-123") {
		t.Errorf("the key is echoed: %s", body)
	}
}

// A profile saved through /api/profiles is one a conversation can switch
// to, as one of Options.Profiles is.
func TestStoredProfileSwitch(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
	ts := newTestServer(t, &server.Options{PersistenceDir: t.TempDir()})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("hello", true)}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	ts.must(404, "POST", "/api/conversations/"+id+"/switch_profile", map[string]any{"profile_name": "nano"}, nil)
	ts.must(201, "POST", "/api/profiles/nano", map[string]any{"llm": map[string]any{"model": "openai/gpt-4.1-nano", "base_url": model.URL + "/v1", "api_key": "k", "num_retries": 0}}, nil)
	ts.must(200, "POST", "/api/conversations/"+id+"/switch_profile", map[string]any{"profile_name": "nano"}, nil)
	ts.must(200, "POST", "/api/conversations/"+id+"/events", userText("again", true), nil)
	ts.waitStatus(id, "finished")
	if got := model.LastRequest().Body["model"]; got != "gpt-4.1-nano" {
		t.Errorf("model after switching to the stored profile: %v", got)
	}
}
