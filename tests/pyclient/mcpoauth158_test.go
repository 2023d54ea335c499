package pyclient_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/mcp/oauthtest"
)

// TestMCPOAuth158 signs in to the same kind of loopback OAuth MCP server
// (mcp/oauthtest) through /api/mcp/oauth/* on a reference 1.58.2 server
// and on gohands serve, each with its own HOME, playing the user: start,
// open the authorization URL, wait until the callback is ready, hand the
// callback URL over, read the status. It compares the routes' statuses
// and JSON shapes (members and value types, not the secret values), the
// tools listed and the tool call's result.
func TestMCPOAuth158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	ref := startReferenceServer(t, py, "HOME="+t.TempDir(), "OH_PERSISTENCE_DIR=")
	gh := startGohandsServer(t, "HOME="+t.TempDir(), "OH_PERSISTENCE_DIR=", "XDG_CONFIG_HOME=")

	type answers struct {
		start, ready, callback, status map[string]any
		codes                          []int
		registered, exchanged          int
		origin                         string
	}
	run := func(srv *server) answers {
		as := oauthtest.New(t)
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 2 * time.Minute}}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // hang guard
		defer cancel()
		var a answers
		call := func(method, path string, body any) map[string]any {
			var out map[string]any
			code, err := c.do(ctx, method, path, body, &out)
			a.codes = append(a.codes, code)
			if err != nil {
				t.Fatalf("%s: %v", srv.name, err)
			}
			return out
		}
		a.start = call("POST", "/api/mcp/oauth/start", map[string]any{
			"name":      "whoami-server",
			"server":    map[string]any{"type": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2"}},
			"tool_call": map[string]any{"name": "whoami"},
			"timeout":   60, // the reference waits min(timeout, 30) s for the URL; loaded machines
		})
		id, _ := a.start["job_id"].(string)
		authURL, _ := a.start["authorization_url"].(string)
		if id == "" || authURL == "" {
			t.Fatalf("%s: start answered %v", srv.name, a.start)
		}
		cb, err := oauthtest.ConsentURL(ctx, authURL)
		if err != nil {
			t.Fatalf("%s: %v", srv.name, err)
		}
		// The callback is taken once the server listens for it. 1.58.2
		// says callback_ready when it has published the callback URL,
		// just before its callback server starts listening; under load
		// a callback handed over in between fails to connect (500, "All
		// connection attempts failed"). So the port is waited for too.
		for {
			a.ready = call("GET", "/api/mcp/oauth/status/"+id, nil)
			if a.ready["callback_ready"] == true && listening(ctx, cb) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the callback never got ready: %v", srv.name, a.ready)
			case <-time.After(50 * time.Millisecond): // polling, bounded by ctx
			}
		}
		a.callback = call("POST", "/api/mcp/oauth/callback/"+id, map[string]any{"callback_url": cb})
		for a.status = a.callback; a.status["status"] != "succeeded" && a.status["status"] != "failed"; {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the sign-in never finished: %v", srv.name, a.status)
			case <-time.After(50 * time.Millisecond):
			}
			a.status = call("GET", "/api/mcp/oauth/status/"+id, nil)
		}
		a.registered, a.exchanged, _ = as.Counts()
		a.origin = as.Origin
		return a
	}
	refA, goA := run(ref), run(gh)

	if refA.status["status"] != "succeeded" {
		t.Fatalf("the reference's sign-in: %v", refA.status)
	}
	if !reflect.DeepEqual(refA.codes[:1], goA.codes[:1]) || goA.codes[len(goA.codes)-1] != 200 {
		t.Errorf("statuses: reference %v, gohands %v", refA.codes, goA.codes)
	}
	for _, c := range []struct {
		name     string
		ref, got map[string]any
	}{
		{"start", refA.start, goA.start},
		{"status while authorizing", refA.ready, goA.ready},
		{"final status", refA.status, goA.status},
	} {
		if r, g := shape(c.ref), shape(c.got); r != g {
			t.Errorf("%s: JSON shape differs\nreference: %s\ngohands:   %s", c.name, r, g)
		}
	}
	for _, m := range []string{"ok", "status", "tools"} {
		if !reflect.DeepEqual(refA.status[m], goA.status[m]) {
			t.Errorf("final status %s: reference %v, gohands %v", m, refA.status[m], goA.status[m])
		}
	}
	rt, _ := refA.status["tool_result"].(map[string]any)
	gt, _ := goA.status["tool_result"].(map[string]any)
	if rt == nil || gt == nil || rt["is_error"] != gt["is_error"] ||
		!strings.HasPrefix(asString(rt["text"]), "caller ") || !strings.HasPrefix(asString(gt["text"]), "caller ") {
		t.Errorf("tool_result: reference %v, gohands %v", rt, gt)
	}
	// The registered client is stamped with its authorization server.
	issuer := func(a answers) string {
		st, _ := a.status["oauth_state"].(map[string]any)
		ci, _ := st["client_info"].(map[string]any)
		return strings.Replace(asString(ci["issuer"]), a.origin, "ORIGIN", 1)
	}
	if r, g := issuer(refA), issuer(goA); r != g || r != "ORIGIN/" {
		t.Errorf("client_info.issuer: reference %q, gohands %q", r, g)
	}
	if refA.exchanged != goA.exchanged || refA.registered != goA.registered {
		t.Errorf("authorization server saw registrations/exchanges: reference %d/%d, gohands %d/%d",
			refA.registered, refA.exchanged, goA.registered, goA.exchanged)
	}
}

func asString(v any) string { s, _ := v.(string); return s }

// listening reports whether the host and port of rawURL accept a
// connection.
func listening(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// shape is v's JSON with every leaf replaced by its type, members sorted.
func shape(v any) string {
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				out[k] = walk(x)
			}
			return out
		case []any:
			out := make([]any, 0, len(v))
			for _, x := range v {
				out = append(out, walk(x))
			}
			return out
		case string:
			return "string"
		case float64:
			return "number"
		case bool:
			return "bool"
		case nil:
			return "null"
		}
		return "?"
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}
