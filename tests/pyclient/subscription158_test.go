package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/subscription/subscriptiontest"
)

// refWithIssuer runs the reference's agent server with its OpenAI OAuth
// issuer (a module constant, read when each request is made) replaced by
// the argument, so both servers can be checked against one scripted
// issuer; the real one cannot be reached from a test.
const refWithIssuer = `import runpy, sys
import openhands.sdk.llm.auth.openai as auth
auth.ISSUER = sys.argv.pop(1)
sys.argv[0] = "openhands.agent_server"
runpy.run_module("openhands.agent_server", run_name="__main__", alter_sys=True)
`

// TestSubscriptionDeviceLogin158 runs the ChatGPT device login on the
// reference 1.58.2 and on gohands serve, each against the same scripted
// issuer, step by step: the statuses and shapes of the answers, what they
// say (pending, connected, the login gone once finished), what is stored
// (the file's fields and modes), the refresh of an expired login, the
// issuer's failures and logout must be the same.
func TestSubscriptionDeviceLogin158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	is := subscriptiontest.NewIssuer(t)
	refDir, gohDir := t.TempDir(), t.TempDir()
	port := freePort(t)
	ref := launch(t, "reference",
		[]string{py, "-c", refWithIssuer, is.URL, "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
		// The issuer is on loopback: no proxy the machine names may stand
		// between.
		referenceEnv(t, "OH_SESSION_API_KEYS_0="+apiKey, "OH_PERSISTENCE_DIR="+refDir, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"),
		port, 50*time.Millisecond, 8*time.Minute)
	goh := startGohandsServer(t, "OH_OPENAI_SUBSCRIPTION_ISSUER="+is.URL, "OH_PERSISTENCE_DIR="+gohDir)

	want := subscriptionSteps(t, is, ref.URL, refDir)
	got := subscriptionSteps(t, is, goh.URL, gohDir)
	if len(want) != len(got) {
		t.Fatalf("the reference\n\t%s\ngohands\n\t%s", strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
	}
	for i := range want {
		w, g := strings.SplitN(want[i], " ", 3), strings.SplitN(got[i], " ", 3)
		// "step status shape": shapes match as the conformance test's do.
		if len(w) != 3 || len(g) != 3 || w[0] != g[0] || w[1] != g[1] || !shapesMatch(w[2], g[2]) {
			t.Errorf("step %d: the reference %q, gohands %q", i, want[i], got[i])
		}
	}
	t.Logf("steps (the reference):\n\t%s", strings.Join(want, "\n\t"))
}

// subscriptionSteps runs the device login on the server at base, whose
// persistence directory is dir, and describes each answer as
// "step status shape".
func subscriptionSteps(t *testing.T, is *subscriptiontest.Issuer, base, dir string) []string {
	t.Helper()
	const p = "/api/llm/subscription/openai"
	file := filepath.Join(dir, "auth", "openai_oauth.json")
	var out []string
	call := func(step, method, path string, body any) map[string]any {
		t.Helper()
		status, ct, b, err := subscriptionCall(t.Context(), base, method, p+path, body)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", step, status, shapeOf(ct, b)))
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if bytes.Contains(b, []byte("-token-")) {
			t.Errorf("%s: %s answered a token: %s", base, step, b)
		}
		return m
	}
	fact := func(step string, v any) { out = append(out, fmt.Sprintf("%s 0 %v", step, v)) }

	fact("status-none", call("status", "GET", "/status", nil)["connected"])
	start := call("start", "POST", "/device/start", nil)
	fact("start-uri", start["verification_uri"] == is.URL+"/codex/device")
	fact("start-interval", start["interval_seconds"])
	ttl := start["expires_at"].(float64) - float64(time.Now().UnixMilli())
	fact("start-15min", ttl > 14*60e3 && ttl <= 15*60e3)
	poll := map[string]any{"device_code": start["device_code"]}
	fact("pending", call("poll-pending", "POST", "/device/poll", poll)["connected"])
	_, err := os.Stat(file)
	fact("pending-stored", err == nil)

	is.Approve(start["user_code"].(string))
	done := call("poll-done", "POST", "/device/poll", poll)
	fact("done", done["connected"])
	call("poll-again", "POST", "/device/poll", poll)
	st := call("status", "GET", "/status", nil)
	fact("status-connected", st["connected"] == true && st["expires_at"] == done["expires_at"])
	stored := readStoredLogin(t, file)
	fact("stored", storedFacts(t, file, stored))

	// An expired login is refreshed by status; a refused refresh leaves
	// none usable.
	stored["expires_at"] = time.Now().Add(-time.Hour).UnixMilli()
	writeStoredLogin(t, file, stored)
	st = call("status-refresh", "GET", "/status", nil)
	fresh := readStoredLogin(t, file)
	fact("refreshed", st["connected"] == true && fresh["access_token"] != stored["access_token"] && fresh["refresh_token"] != stored["refresh_token"])
	is.RevokeRefreshTokens()
	fresh["expires_at"] = time.Now().Add(-time.Hour).UnixMilli()
	writeStoredLogin(t, file, fresh)
	fact("refused-refresh", call("status-refused", "GET", "/status", nil)["connected"])

	// The issuer fails: 500s, and nothing stored.
	start = call("start", "POST", "/device/start", nil)
	poll = map[string]any{"device_code": start["device_code"]}
	is.Fail(subscriptiontest.PollPath, 502)
	call("poll-502", "POST", "/device/poll", poll)
	is.Fail(subscriptiontest.PollPath, 0)
	is.Refuse(start["user_code"].(string), "access_denied")
	call("poll-denied", "POST", "/device/poll", poll)
	is.Fail(subscriptiontest.UserCodePath, 503)
	call("start-503", "POST", "/device/start", nil)
	is.Fail(subscriptiontest.UserCodePath, 0)

	// A poll while another of the same login waits on the issuer, then a
	// logout before that one ends: nothing is stored.
	start = call("start", "POST", "/device/start", nil)
	poll = map[string]any{"device_code": start["device_code"]}
	is.Approve(start["user_code"].(string))
	arrived, release := is.Hold(subscriptiontest.PollPath)
	type answered struct {
		status int
		ct     string
		body   []byte
	}
	first := make(chan answered, 1)
	go func() {
		status, ct, b, err := subscriptionCall(t.Context(), base, "POST", p+"/device/poll", poll)
		if err != nil {
			b = []byte(err.Error())
		}
		first <- answered{status, ct, b}
	}()
	<-arrived
	fact("in-flight", call("poll-in-flight", "POST", "/device/poll", poll)["connected"])
	call("logout-in-flight", "POST", "/logout", nil)
	release()
	a := <-first
	out = append(out, fmt.Sprintf("poll-overtaken %d %s", a.status, shapeOf(a.ct, a.body)))
	_, err = os.Stat(file)
	fact("overtaken-stored", err == nil)
	call("poll-after-overtaken", "POST", "/device/poll", poll)

	// Logout removes the login and forgets those under way.
	writeStoredLogin(t, file, fresh)
	start = call("start", "POST", "/device/start", nil)
	is.Approve(start["user_code"].(string))
	fact("logout-connected", call("logout", "POST", "/logout", nil)["connected"])
	_, err = os.Stat(file)
	fact("logout-stored", err == nil)
	call("poll-after-logout", "POST", "/device/poll", map[string]any{"device_code": start["device_code"]})
	call("poll-unknown", "POST", "/device/poll", map[string]any{"device_code": "x"})
	return out
}

// storedFacts describes the stored login: its fields and their kinds, the
// file's and its directory's modes.
func storedFacts(t *testing.T, file string, m map[string]any) string {
	t.Helper()
	keys := slices.Sorted(maps.Keys(m))
	var modes []fs.FileMode
	for _, p := range []string{file, filepath.Dir(file)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, fi.Mode().Perm())
	}
	return fmt.Sprintf("%v type=%v vendor=%v modes=%v", keys, m["type"], m["vendor"], modes)
}

func readStoredLogin(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

func writeStoredLogin(t *testing.T, file string, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := os.WriteFile(file, b, fs.FileMode(0o600)); err != nil {
		t.Fatal(err)
	}
}

func subscriptionCall(ctx context.Context, base, method, path string, body any) (int, string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-API-Key", apiKey)
	// A connection each: uvicorn closes a kept-alive one after a 500.
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, "", nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b, err
}
