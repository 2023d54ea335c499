package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// The parent calls the workflow tool with a map-reduce script; the
// sub-agents (matched by their tasks, in any order) answer, and the
// reducer's answer comes back as the workflow's result.
func TestRun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Setenv("HOME", t.TempDir()) // no user skills
	script := "async def main(wf):\n" +
		"    files = ['docs/auth.md', 'docs/deploy.md', 'docs/storage.md']\n" +
		"    lines = await wf.map_agents(files, 'Summarise {item} in one line.')\n" +
		"    return await wf.reduce_agent(lines, 'Write a one-paragraph overview from these summaries.')\n"
	answer := func(text string) []llmtest.Reply { return []llmtest.Reply{{Text: text}} }
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "auth", FirstUser: "^Summarise docs/auth.md", Replies: answer("auth: signed cookies, bearer keys")},
		llmtest.Rule{Name: "deploy", FirstUser: "^Summarise docs/deploy.md", Replies: answer("deploy: CI on tags")},
		llmtest.Rule{Name: "storage", FirstUser: "^Summarise docs/storage.md", Replies: answer("storage: append-only JSON")},
		llmtest.Rule{Name: "reduce", FirstUser: "^Write a one-paragraph overview", Replies: answer("OVERVIEW-5b2: cookies, CI, JSON.")},
		llmtest.Rule{Name: "parent", FirstUser: "^Use a workflow", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "workflow", Arguments: llmtest.Args(map[string]any{"name": "overview", "script": script})}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "OVERVIEW-5b2: cookies, CI, JSON."}`}}},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewResponder(t, pb.Respond, nil)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: t.TempDir(), Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "status: finished") {
		t.Errorf("output:\n%s", out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6 (parent twice, three mappers, one reducer)", len(reqs))
	}
	last := string(reqs[5].RawBody)
	if !strings.Contains(last, "OVERVIEW-5b2") || !strings.Contains(string(reqs[4].RawBody), "append-only JSON") {
		t.Errorf("the reducer's answer did not come back to the parent, or the summaries did not reach the reducer")
	}
}
