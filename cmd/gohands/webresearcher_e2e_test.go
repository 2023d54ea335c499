package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/browser"
)

// gohands run --browser offers the web-researcher built-in through the
// default agent's task tool: the model hands it a task, and the
// sub-agent's model request offers what 1.58.2's offers it (the browser
// tool set, finish and think: tests/pyclient TestIssue30Live158 compares
// the two live), with the task as its first user message after the
// system message. The MCP servers the definition declares (fetch,
// tavily) are not started: a sub-agent uses its caller's, as in 1.58.2.
// Its answer reaches the parent. No page is opened: no Chromium starts.
func TestE2EWebResearcher(t *testing.T) {
	t.Parallel()
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	const prompt = "Find the release notes of frobnicator 2."
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_task", "task", map[string]any{
			"description": "look it up", "prompt": prompt, "subagent_type": "web-researcher"})}},
		finishReply("RESEARCH-ANSWER-5"), // the sub-agent
		finishReply("done"),
	)
	e.mustRun(0, e.args("--browser", "Research frobnicator")...)
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	type offered struct {
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"function"`
	}
	var parent struct {
		Tools []offered `json:"tools"`
	}
	if err := reqs[0].Decode(&parent); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(parent.Tools, func(tl offered) bool { return tl.Function.Name == "task" })
	if i < 0 || !strings.Contains(parent.Tools[i].Function.Description, "web-researcher") {
		t.Errorf("the parent's task tool does not offer web-researcher: %+v", parent.Tools)
	}

	want := []string{"browser_click", "browser_close_tab", "browser_get_content", "browser_get_state", "browser_get_storage",
		"browser_go_back", "browser_list_tabs", "browser_navigate", "browser_scroll", "browser_set_storage",
		"browser_start_recording", "browser_stop_recording", "browser_switch_tab", "browser_type", "finish", "think"}
	if got := requestTools(t, reqs[1]); !slices.Equal(got, want) {
		t.Errorf("the web-researcher's tools:\n got %v\nwant %v (1.58.2's)", got, want)
	}
	var sub struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := reqs[1].Decode(&sub); err != nil {
		t.Fatal(err)
	}
	if len(sub.Messages) != 2 || sub.Messages[0].Role != "system" || sub.Messages[1].Role != "user" || !strings.Contains(string(sub.Messages[1].Content), prompt) {
		t.Errorf("the web-researcher's first request: %s", reqs[1].RawBody)
	}
	if _, texts := toolResults(t, reqs[2]); len(texts) != 1 || !strings.Contains(texts[0], "RESEARCH-ANSWER-5") {
		t.Errorf("the parent saw %q", texts)
	}
}
