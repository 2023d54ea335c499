package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// TestRun runs the program against gohands' agent server, in this
// process, with the scripted model of the local program's test: the same
// transcript.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "file_editor", Arguments: llmtest.Args(map[string]any{
			"command": "create", "path": filepath.Join(dir, "hello.txt"), "file_text": "Hello, world!",
		})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Wrote hello.txt."}`}}},
	)
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
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Server: hs.URL, Key: "k", Dir: dir, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello.txt: Hello, world!", "status: finished", "Wrote hello.txt."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
