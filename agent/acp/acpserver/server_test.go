package acpserver

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
)

// The client's MCP servers become the reference's mcp_config entries.
func TestMCPConfig(t *testing.T) {
	got, err := mcpConfig([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "node", Args: []string{"fs.js"}, Env: []sdk.EnvVariable{{Name: "A", Value: "1"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "web", Url: "http://127.0.0.1:1/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer x"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fs":  `{"args":["fs.js"],"command":"node","env":{"A":"1"}}`,
		"web": `{"headers":{"Authorization":"Bearer x"},"transport":"http","url":"http://127.0.0.1:1/mcp"}`,
	}
	gs := map[string]string{}
	for k, v := range got {
		gs[k] = string(v)
	}
	if d := cmp.Diff(want, gs); d != "" {
		t.Error(d)
	}
	if _, err := mcpConfig([]sdk.McpServer{{Stdio: &sdk.McpServerStdio{Command: "x"}}}); err == nil {
		t.Error("a server without a name was accepted")
	}
}

func TestPromptText(t *testing.T) {
	var blocks []sdk.ContentBlock
	json.Unmarshal([]byte(`[{"type":"text","text":"fix it"},{"type":"resource","resource":{"uri":"file:///a.go","text":"package a"}},{"type":"image","mimeType":"image/png","data":"AAAA"}]`), &blocks)
	text, images := text(blocks)
	if text != "fix it\n<file uri=\"file:///a.go\">\npackage a\n</file>" {
		t.Errorf("text %q", text)
	}
	if len(images) != 1 || images[0].ImageURLs[0] != "data:image/png;base64,AAAA" {
		t.Errorf("images %+v", images)
	}
}

func TestModes(t *testing.T) {
	for _, m := range []string{ModeAsk, ModeApprove, ModeRisky} {
		if got := modeOf(policyOf(m)); got != m {
			t.Errorf("mode %s → policy → %s", m, got)
		}
	}
	if policyOf("yolo") != nil {
		t.Error("unknown mode has a policy")
	}
}

// Tool call titles are for people: never the arguments' JSON (issue 32
// item 6).
func TestTitle(t *testing.T) {
	tests := []struct {
		tool, args, summary, want string
	}{
		{"terminal", `{"command":"go test ./..."}`, `terminal: {"command": "go test ./..."}`, "`go test ./...`"},
		{"terminal", `{"command":"cat <<EOF\nx\nEOF"}`, "", "`cat <<EOF …`"},
		{"file_editor", `{"command":"str_replace","path":"/w/calc.py","old_str":"a","new_str":"b"}`, "", "Edit `/w/calc.py`"},
		{"file_editor", `{"command":"create","path":"/w/new.py","file_text":"x"}`, "", "Create `/w/new.py`"},
		{"file_editor", `{"command":"view","path":"/w"}`, "", "Read `/w`"},
		{"grep", `{"pattern":"TODO"}`, "", "Search `TODO`"},
		{"fetch", `{"url":"https://example.com"}`, `fetch: {"url": "https://example.com"}`, "fetch `https://example.com`"},
		{"mcp_tool", `{"a":1}`, "Looks up the weather", "Looks up the weather"},
		{"mcp_tool", `{"a":1}`, `mcp_tool: {"a": 1}`, "mcp_tool"},
	}
	for _, tt := range tests {
		e := &event.ActionEvent{ToolName: tt.tool, ToolCall: event.ToolCall{Name: tt.tool, Arguments: tt.args}, Summary: tt.summary}
		if got := title(e); got != tt.want {
			t.Errorf("%s %s: title %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}
