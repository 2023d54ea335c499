package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// claudeACP is Zed's Claude Agent ACP adapter, installed by
// scripts/deps.d/40-acp.sh.
const claudeACP = "../../agent/acp/testdata/npm/node_modules/@zed-industries/claude-agent-acp/dist/index.js"

// Our client creates an ACPAgent conversation on gohands serve: the
// external agent (Claude Code on the scripted model) writes a file, and
// the client's callbacks get its tool calls and the turn's finish.
func TestACPAgentThroughRemoteConversation(t *testing.T) {
	node := testenv.Program(t, "node")
	if _, err := os.Stat(claudeACP); err != nil {
		testenv.Missing(t, "%s (run scripts/deps.sh): %v", claudeACP, err)
	}
	script, _ := filepath.Abs(claudeACP)
	work := t.TempDir()
	target := filepath.Join(work, "hello.txt")
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hi\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	// Claude Code checks connectivity with a HEAD first; the scripted
	// server serves POSTs only.
	u, _ := url.Parse(model.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			proxy.ServeHTTP(w, r)
		}
	}))
	defer front.Close()

	ts := startServer(t)
	secrets := map[string]secret.Source{}
	for k, v := range map[string]string{
		"ANTHROPIC_BASE_URL": front.URL, "ANTHROPIC_API_KEY": "sk-ant-test", "HOME": t.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1",
	} {
		secrets[k] = &secret.StaticSecret{Value: secret.New(v)}
	}
	var mu sync.Mutex
	var kinds []string
	var answer string
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conv, err := remote.New(ctx, acp.New(node, script), ts.workspace(work), &remote.Options{
		Secrets: secrets,
		OnEvent: func(e event.Event) {
			mu.Lock()
			defer mu.Unlock()
			k, _ := event.KindOf(e)
			kinds = append(kinds, k)
			if a, ok := e.(*event.ActionEvent); ok && a.ToolName == "finish" {
				b, _ := event.MarshalJSON(a.Action)
				answer = string(b)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage("write hello.txt")); err != nil {
		t.Fatal(err)
	}
	if err := conv.Run(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if st := conv.State().Fields().ExecutionStatus; st != conversation.StatusFinished {
		t.Errorf("status %s", st)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hi\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(answer, "Wrote hello.txt.") {
		t.Errorf("finish %q; events %v", answer, kinds)
	}
	if !strings.Contains(strings.Join(kinds, " "), "ACPToolCallEvent") {
		t.Errorf("no ACPToolCallEvent among %v", kinds)
	}
}
