package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

type closingTool struct {
	tool.Tool
	closed *[]string
}

func (c closingTool) Close() error {
	*c.closed = append(*c.closed, c.Name())
	if c.Name() == "bad_close" {
		return errors.New("boom")
	}
	return nil
}

type namedAction struct {
	Greeting string `json:"greeting"`
}

func init() {
	event.RegisterKind[namedAction]("TestNamedAction")
}

func named(name string) tool.Tool {
	return tool.New(name, "d", func(context.Context, *namedAction) (*plainObs, error) { return &plainObs{}, nil }, nil)
}

func TestResolve(t *testing.T) {
	var gotCtx tool.Context
	var gotParams string
	tool.Register("test_echo_params", func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		gotCtx, gotParams = ctx, string(params)
		return []tool.Tool{named("echo_a"), named("echo_b")}, nil
	})
	tool.Register("test_failing", func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return nil, errors.New("no shell")
	})
	secrets := func(name string) (string, bool) { return "v-" + name, true }
	ctx := tool.Context{WorkingDir: "/w", ConversationDir: "/c", Secrets: secrets}

	tools, err := tool.Resolve(ctx, tool.Spec{Name: "test_echo_params", Params: event.Map[string, any]{"limit": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || gotParams != `{"limit":3}` || gotCtx.WorkingDir != "/w" || gotCtx.ConversationDir != "/c" {
		t.Errorf("factory got %+v %s, returned %d tools", gotCtx, gotParams, len(tools))
	}
	if v, ok := gotCtx.Secrets("K"); !ok || v != "v-K" {
		t.Errorf("secrets lookup = %q %v", v, ok)
	}
	if _, err := tool.Resolve(ctx, tool.Spec{Name: "test_echo_params"}); err != nil || gotParams != "{}" {
		t.Errorf("empty params: %v, factory got %s", err, gotParams)
	}

	_, err = tool.Resolve(ctx, tool.Spec{Name: "nope"})
	if !errors.Is(err, tool.ErrNotRegistered) || err.Error() != "ToolDefinition 'nope' is not registered" {
		t.Errorf("unknown tool error = %v", err)
	}
	if _, err := tool.Resolve(ctx, tool.Spec{Name: "test_failing"}); err == nil || err.Error() != `tool "test_failing": no shell` {
		t.Errorf("factory error = %v", err)
	}
	if !slices.Contains(tool.Registered(), "test_echo_params") {
		t.Errorf("Registered() = %v", tool.Registered())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("registering a name twice did not panic")
			}
		}()
		tool.Register("test_echo_params", nil)
	}()
}

func TestResolveAllDuplicates(t *testing.T) {
	var closed []string
	tool.Register("test_dup_a", func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return []tool.Tool{closingTool{named("shared"), &closed}, closingTool{named("only_a"), &closed}}, nil
	})
	tool.Register("test_dup_b", func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return []tool.Tool{closingTool{named("shared"), &closed}}, nil
	})
	_, err := tool.ResolveAll(tool.Context{}, []tool.Spec{{Name: "test_dup_a"}, {Name: "test_dup_b"}})
	var dup *tool.DuplicateError
	if !errors.As(err, &dup) || !slices.Equal(dup.Names, []string{"shared"}) || err.Error() != "duplicate tool names: shared" {
		t.Fatalf("ResolveAll error = %v", err)
	}
	if !slices.Equal(closed, []string{"shared", "only_a", "shared"}) {
		t.Errorf("tools closed after failure: %v", closed)
	}

	closed = nil
	_, err = tool.ResolveAll(tool.Context{}, []tool.Spec{{Name: "test_dup_a"}, {Name: "missing"}})
	if !errors.Is(err, tool.ErrNotRegistered) || len(closed) != 2 {
		t.Errorf("ResolveAll with a missing spec: %v, closed %v", err, closed)
	}

	closed = nil
	tools, err := tool.ResolveAll(tool.Context{}, []tool.Spec{{Name: "test_dup_a"}})
	if err != nil || len(tools) != 2 {
		t.Fatalf("ResolveAll = %v, %v", tools, err)
	}
	if err := tool.CloseAll(append(tools, closingTool{named("bad_close"), &closed}, named("plain"))); err == nil ||
		err.Error() != "closing tool bad_close: boom" {
		t.Errorf("CloseAll error = %v", err)
	}
	if fmt.Sprint(closed) != "[shared only_a bad_close]" {
		t.Errorf("closed %v", closed)
	}
}

func TestTypedClose(t *testing.T) {
	n := 0
	tl := tool.New("closer", "d", func(context.Context, *namedAction) (*plainObs, error) { return &plainObs{}, nil },
		&tool.Options{Close: func() error { n++; return nil }})
	var c tool.Closer = tl
	if err := c.Close(); err != nil || n != 1 {
		t.Errorf("Close: %v, called %d times", err, n)
	}
	if err := named("x").(tool.Closer).Close(); err != nil {
		t.Errorf("Close without Options.Close: %v", err)
	}
}

func TestExecuteWrongAction(t *testing.T) {
	tl := named("typed")
	if _, err := tl.Execute(context.Background(), &riskyAction{}); err == nil {
		t.Error("Execute accepted an action of another tool")
	}
}

type shotAction struct {
	Fail bool `json:"fail,omitempty"`
}

func init() { event.RegisterKind[shotAction]("TestShotAction") }

// A tool's observation reaches the model as text and images, with the
// error header when it failed.
func TestObservationRendering(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgo="
	shot := tool.New("shot", "Screenshot.", func(_ context.Context, a *shotAction) (*plainObs, error) {
		return &plainObs{event.ObservationBase{IsError: a.Fail,
			Content: event.List[event.Content]{event.Text("screen:"), event.Image(png)}}}, nil
	}, nil)
	for _, fail := range []bool{false, true} {
		c, err := tool.PrepareCall([]tool.Tool{shot}, "shot", fmt.Sprintf(`{"fail":%v}`, fail), false)
		if err != nil {
			t.Fatal(err)
		}
		obs, err := c.Tool.Execute(context.Background(), c.Action)
		if err != nil {
			t.Fatal(err)
		}
		content := event.ObservationContent(obs)
		want := []string{"text:screen:", "image:" + png}
		if fail {
			want = append([]string{"text:" + event.ErrorHeader}, want...)
		}
		var got []string
		for _, b := range content {
			got = append(got, b.Type+":"+b.Text+strings.Join(b.ImageURLs, ","))
		}
		if !slices.Equal(got, want) {
			t.Errorf("fail=%v: content %q, want %q", fail, got, want)
		}
	}
}

func TestNameFromKind(t *testing.T) {
	for kind, want := range map[string]string{
		"TerminalTool": "terminal", "FileEditorTool": "file_editor", "TaskTrackerTool": "task_tracker",
		"FinishTool": "finish", "ThinkTool": "think", "GlobTool": "glob", "InvokeSkillTool": "invoke_skill",
		"TaskToolSet": "task_tool_set", "BrowserToolSet": "browser_tool_set", "XMLHttpRequest": "xml_http_request",
		"MCPTool": "mcp",
	} {
		if got := tool.NameFromKind(kind); got != want {
			t.Errorf("NameFromKind(%q) = %q, want %q", kind, got, want)
		}
	}
}
