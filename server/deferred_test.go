package server_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/server"
)

// TestDeferredInit: a dormant server answers 503 but for /alive and GET
// /api/init; POST /api/init needs the dormant secret key as
// X-Init-API-Key, refuses unknown keys and empty session keys, then starts
// the server with the delivered session key, directory and environment;
// a second init is refused. A server started normally answers /api/init
// with 404, and 401 to a POST without the key.
func TestDeferredInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := server.NewDeferred(&server.Options{SecretKey: "pool-secret", WorkspacePath: dir + "/project", BashEventsDir: dir + "/bash"})
	hs := httptest.NewServer(d)
	defer hs.Close()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Close(ctx)
	}()
	ts := &testServer{t: t, http: hs}
	ts.must(200, "GET", "/alive", nil, nil)
	if st, body := ts.do("GET", "/api/conversations/count", nil); st != 503 || !strings.Contains(string(body), "dormant") {
		t.Errorf("dormant: %d %s", st, body)
	}
	var status map[string]any
	ts.must(200, "GET", "/api/init", nil, &status)
	if status["state"] != "dormant" {
		t.Errorf("state %v", status)
	}
	ts.must(401, "POST", "/api/init", map[string]any{}, nil)
	init := func(body any, hdr map[string]string) (int, string) {
		st, b, _ := ts.doHeader("POST", "/api/init", body, hdr)
		return st, string(b)
	}
	key := map[string]string{"X-Init-API-Key": "pool-secret"}
	if st, b := init(map[string]any{"bogus": 1}, key); st != 422 {
		t.Errorf("an unknown key: %d %s", st, b)
	}
	if st, b := init(map[string]any{"session_api_keys": []string{""}}, key); st != 422 {
		t.Errorf("an empty session key: %d %s", st, b)
	}
	const envName = "GOHANDS_DEFERRED_INIT_TEST"
	if st, b := init(map[string]any{"session_api_keys": []string{"user-key"}, "conversations_path": dir + "/user-convs",
		"env": map[string]string{envName: "set"}, "telemetry": map[string]any{"mode": "disabled"}}, key); st != 200 || !strings.Contains(b, `"ready"`) {
		t.Fatalf("init: %d %s", st, b)
	}
	if os.Getenv(envName) != "set" {
		t.Error("env was not applied")
	}
	ts.must(401, "GET", "/api/conversations/count", nil, nil)
	ts.key = "user-key"
	ts.must(200, "GET", "/api/conversations/count", nil, nil)
	if _, err := os.Stat(dir + "/user-convs"); err != nil {
		t.Errorf("the delivered conversations path is not used: %v", err)
	}
	if st, b := init(map[string]any{}, key); st != 400 || !strings.Contains(b, "already in state: ready") {
		t.Errorf("second init: %d %s", st, b)
	}
	ts.must(200, "GET", "/api/init", nil, &status)
	if status["state"] != "ready" {
		t.Errorf("state %v", status)
	}

	normal := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	normal.key = ""
	if st, body := normal.do("GET", "/api/init", nil); st != 404 || !strings.Contains(string(body), "deferred_init") {
		t.Errorf("GET /api/init on a normal server: %d %s", st, body)
	}
	normal.must(401, "POST", "/api/init", map[string]any{}, nil)
}
