package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// The parent, on gohands' agent server in this process, launches a child
// and finishes; the program attaches to the child and sees it finish,
// having written its file. The scripted model answers each conversation
// by its task, since the two run at once.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "parent", FirstUser: "^Start a child", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "start_child_conversation", Arguments: llmtest.Args(map[string]any{
				"task": "Write NOTES.md with three release checklist items.", "title": "Checklist", "isolation": "shared",
			})}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Started the checklist child."}`}}},
		}},
		llmtest.Rule{Name: "child", FirstUser: "^Write NOTES.md", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "file_editor", Arguments: llmtest.Args(map[string]any{
				"command": "create", "path": filepath.Join(dir, "NOTES.md"), "file_text": "- tests pass\n- changelog\n- tag\n",
			})}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Wrote NOTES.md."}`}}},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	state := t.TempDir()
	as, err := server.New(&server.Options{
		ConversationsPath: state + "/conversations", WorkspacePath: dir,
		BashEventsDir: state + "/bash", SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(as)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		as.Close(ctx)
		hs.Close()
	}()
	// The server hands its listener and key over to the tool itself
	// (server.Options.InternalURL's default): no environment to set.

	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = model.URL + "/v1"
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	if err := run(ctx, config{LLM: cfg, Server: hs.URL, Key: "k", Dir: dir, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Started the checklist child.", ": finished, children [", "child ", ": finished\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "NOTES.md")); err != nil || !strings.Contains(string(b), "changelog") {
		t.Errorf("the child did not write NOTES.md: %q, %v", b, err)
	}
}
