// Package acptest prepares the real ACP server that tests run: Zed's
// Claude Agent ACP adapter, with the Claude Code CLI it bundles, installed
// from npm into agent/acp/testdata/npm by scripts/deps.d/40-npm.sh, its
// model a scripted Anthropic Messages server of llmtest.
package acptest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// Claude is claude-agent-acp ready to start as `Node Script` with Env.
type Claude struct {
	Node   string // the node program
	Script string // the adapter's entry point, an absolute path
	// Env points the adapter at the scripted model and away from the
	// machine's Claude setup (a fresh HOME), with no telemetry or
	// update checks.
	Env map[string]string
}

// NewClaude finds node and the adapter (testenv.Missing when either is
// absent) and points the adapter at llm, through a front that lets only
// POSTs reach it: Claude Code checks connectivity with a HEAD before its
// first call, and the scripted server serves POSTs only. The front is
// closed when the test ends.
func NewClaude(t testing.TB, llm *llmtest.Server) *Claude {
	t.Helper()
	node := testenv.Program(t, "node")
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "testdata", "npm", "node_modules",
		"@zed-industries", "claude-agent-acp", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		testenv.Missing(t, "%s (run scripts/deps.sh): %v", script, err)
	}
	target, err := url.Parse(llm.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	return &Claude{
		Node:   node,
		Script: filepath.Clean(script),
		Env: map[string]string{
			"ANTHROPIC_BASE_URL": front.URL,
			"ANTHROPIC_API_KEY":  "sk-ant-test",
			"HOME":               t.TempDir(),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
			"DISABLE_AUTOUPDATER":                      "1",
			// The adapter refuses to run as root outside a sandbox; tests
			// may run as root in a container.
			"IS_SANDBOX": "1",
		},
	}
}
