package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOpenAISubscription(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	type status struct {
		Vendor       string  `json:"vendor"`
		Connected    bool    `json:"connected"`
		AccountEmail *string `json:"account_email"`
		ExpiresAt    *int64  `json:"expires_at"`
	}
	var st status
	ts.must(200, "GET", "/api/llm/subscription/openai/status", nil, &st)
	if st.Connected || st.Vendor != "openai" || st.ExpiresAt != nil {
		t.Errorf("no login: %+v", st)
	}
	var models struct {
		Vendor string   `json:"vendor"`
		Models []string `json:"models"`
	}
	ts.must(200, "GET", "/api/llm/subscription/openai/models", nil, &models)
	if models.Vendor != "openai" || !slices.Contains(models.Models, "gpt-5.5") || !slices.IsSorted(models.Models) {
		t.Errorf("models: %+v", models)
	}

	// A login the reference stored (its layout) reads as connected until
	// it expires; its tokens never leave the server.
	file := filepath.Join(dir, "auth", "openai_oauth.json")
	login := func(expires int64) {
		b, _ := json.Marshal(map[string]any{"type": "oauth", "vendor": "openai", "access_token": "ACCESS-TOKEN-1", "refresh_token": "REFRESH-TOKEN-1", "expires_at": expires})
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exp := time.Now().Add(time.Hour).UnixMilli()
	login(exp)
	body := ts.must(200, "GET", "/api/llm/subscription/openai/status", nil, &st)
	if !st.Connected || st.ExpiresAt == nil || *st.ExpiresAt != exp || strings.Contains(string(body), "TOKEN-1") {
		t.Errorf("stored login: %s", body)
	}
	// Expired, it would need a refresh, which this server cannot do.
	login(time.Now().Add(-time.Minute).UnixMilli())
	st = status{}
	ts.must(200, "GET", "/api/llm/subscription/openai/status", nil, &st)
	if st.Connected {
		t.Errorf("expired login: %+v", st)
	}
	login(exp)
	ts.must(200, "POST", "/api/llm/subscription/openai/logout", nil, &st)
	if _, err := os.Stat(file); !os.IsNotExist(err) || st.Connected {
		t.Errorf("logout: %+v, the file: %v", st, err)
	}
	ts.must(200, "POST", "/api/llm/subscription/openai/logout", nil, nil)

	// No device login starts here, so none can be polled.
	ts.must(404, "POST", "/api/llm/subscription/openai/device/poll", map[string]any{"device_code": "x"}, nil)
	ts.must(422, "POST", "/api/llm/subscription/openai/device/poll", map[string]any{}, nil)
	ts.key = ""
	if code, body := ts.do("GET", "/api/llm/subscription/openai/status", nil); code != 401 {
		t.Errorf("without the key: %d %s", code, body)
	}
}
