package task_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/task"
)

// browserUp decides whether the stand-in browser tool set below makes
// tools, as the real one does only when a Chromium is found. This test
// binary does not link package browser, so the name is free.
var browserUp atomic.Bool

type fakeBrowseAction struct{}

type fakeBrowseObs struct{ event.ObservationBase }

func init() {
	event.RegisterKind[fakeBrowseAction]("TestFakeBrowseAction")
	event.RegisterKind[fakeBrowseObs]("TestFakeBrowseObservation")
	tool.Register("browser_tool_set", func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		if !browserUp.Load() {
			return nil, nil
		}
		return []tool.Tool{tool.New("browser_navigate", "Open a page.", func(context.Context, *fakeBrowseAction) (*fakeBrowseObs, error) {
			return &fakeBrowseObs{}, nil
		}, nil)}, nil
	})
}

// TestWebResearcher: the web-researcher built-in, with the browser tool
// set, is offered only when that set makes tools (a browser can run).
func TestWebResearcher(t *testing.T) {
	names := func() []string {
		var out []string
		for _, d := range task.Builtins() {
			out = append(out, d.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); slices.Contains(got, "web-researcher") {
		t.Errorf("without a browser the built-ins are %v", got)
	}
	browserUp.Store(true)
	defer browserUp.Store(false)
	if got := names(); !slices.Equal(got, []string{"bash-runner", "code-explorer", "general-purpose", "web-researcher"}) {
		t.Fatalf("with a browser the built-ins are %v", got)
	}
	defs, _ := task.Available(t.TempDir(), t.TempDir())
	i := slices.IndexFunc(defs, func(d *task.Definition) bool { return d.Name == "web-researcher" })
	if i < 0 {
		t.Fatal("web-researcher is not available")
	}
	d := defs[i]
	if !slices.Equal(d.Tools, []string{"browser_tool_set"}) || d.Model != "inherit" || d.Level == nil || *d.Level != task.LevelBuiltin || d.Description == "" || d.SystemPrompt == "" {
		t.Errorf("web-researcher: %+v", d)
	}
	// 1.58.2 declares fetch and tavily (listed by POST /api/sub-agents);
	// TestSubAgentInheritsMCPServers shows declared servers are not started.
	if _, f := d.MCPConfig["fetch"]; !f || len(d.MCPConfig) != 2 || !strings.Contains(string(d.MCPConfig["tavily"]), "${TAVILY_API_KEY}") {
		t.Errorf("web-researcher's MCP servers: %s", d.MCPConfig)
	}
}
