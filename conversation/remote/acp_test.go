package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/agent/acp/acptest"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// Our client creates an ACPAgent conversation on gohands serve: the
// external agent (Claude Code on the scripted model) writes a file, and
// the client's callbacks get its tool calls and the turn's finish.
func TestACPAgentThroughRemoteConversation(t *testing.T) {
	work := t.TempDir()
	target := filepath.Join(work, "hello.txt")
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hi\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	claude := acptest.NewClaude(t, model)

	ts := startServer(t)
	secrets := map[string]secret.Source{}
	for k, v := range claude.Env {
		secrets[k] = &secret.StaticSecret{Value: secret.New(v)}
	}
	var mu sync.Mutex
	var kinds []string
	var answer string
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conv, err := remote.New(ctx, acp.New(claude.Node, claude.Script), ts.workspace(work), &remote.Options{
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
