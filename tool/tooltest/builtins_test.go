package tooltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// TestBuiltinsFromJSONSpecs does what a conversation does with a tool list
// received as JSON: resolves every built-in through the registry, then
// turns model tool calls into actions and runs them. A good call of each
// tool runs; a bad one is refused with a message naming the field.
func TestBuiltinsFromJSONSpecs(t *testing.T) {
	work, conv := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("alpha\nneedle here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var specs []tool.Spec
	const list = `[{"name":"terminal","params":{}},{"name":"file_editor"},{"name":"task_tracker","params":{}},
		{"name":"glob"},{"name":"grep"},{"name":"think"},{"name":"finish"}]`
	if err := json.Unmarshal([]byte(list), &specs); err != nil {
		t.Fatal(err)
	}
	tools, err := tool.ResolveAll(tool.Context{WorkingDir: work, ConversationDir: conv}, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tool.CloseAll(tools); err != nil {
			t.Error(err)
		}
	}()

	file := filepath.Join(work, "notes.txt")
	good := []struct{ name, args, want string }{
		{"terminal", `{"command":"echo hi-from-bash","security_risk":"LOW","summary":"say hi"}`, "hi-from-bash"},
		{"bash", `{"command":"echo via-alias"}`, "via-alias"},
		{"str_replace_editor", `{"path":` + quote(file) + `}`, "needle here"},
		{"file_editor", `{"command":"view","path":` + quote(file) + `,"view_range":"[2, 2]"}`, "needle"},
		{"task_tracker", `{"command":"plan","task_list":"[{\"title\":\"Write tests\"}]"}`, "1 task"},
		{"glob", `{"pattern":"*.txt","path":` + quote(work) + `}`, "notes.txt"},
		{"grep", `{"pattern":"needle","path":` + quote(work) + `}`, "notes.txt"},
		{"think", `{"thought":"first the parser"}`, "Your thought has been logged."},
		{"finish", `{"message":"All done."}`, "All done."},
	}
	for _, g := range good {
		c, err := tool.PrepareCall(tools, g.name, g.args, true)
		if err != nil {
			t.Errorf("%s %s: %v", g.name, g.args, err)
			continue
		}
		obs, err := c.Tool.Execute(context.Background(), c.Action)
		if err != nil {
			t.Errorf("%s: execute: %v", g.name, err)
			continue
		}
		text := event.TextOf(event.ObservationContent(obs))
		if obs.Obs().IsError || !strings.Contains(text, g.want) {
			t.Errorf("%s %s: observation (error %v) %q, want it to contain %q", g.name, g.args, obs.Obs().IsError, text, g.want)
		}
		if _, err := event.MarshalKinded(c.Action); err != nil {
			t.Errorf("%s: action does not encode: %v", g.name, err)
		}
		if _, err := event.MarshalKinded(obs); err != nil {
			t.Errorf("%s: observation does not encode: %v", g.name, err)
		}
	}

	bad := []struct{ name, args, want string }{
		{"terminal", `{}`, `missing required field "command"`},
		{"terminal", `{"command":"ls","timeout":"soon"}`, `field "timeout": expected number, got string "soon"`},
		{"terminal", `{"command":"ls","security_risk":"EXTREME"}`, `field "security_risk"`},
		{"file_editor", `{"command":"explode","path":"/x"}`, `field "command": "explode" is not one of [view create str_replace insert undo_edit]`},
		{"file_editor", `{"command":"view","path":"/x","colour":"red"}`, `unknown field "colour"`},
		{"task_tracker", `{"command":"plan","task_list":[{"title":"a","status":"doing"}]}`, `field "task_list[0].status"`},
		{"glob", `{"path":"/"}`, `missing required field "pattern"`},
		{"grep", `{"pattern":7}`, `field "pattern": expected string`},
		{"think", `{"thought":`, `unparseable JSON`},
		{"finish", `{"message":["a",1]}`, `field "message": expected string, got array`},
		{"browser", `{}`, `Tool 'browser' not found`},
	}
	for _, b := range bad {
		_, err := tool.PrepareCall(tools, b.name, b.args, true)
		var ce *tool.CallError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s %s: error %v, want a *CallError containing %q", b.name, b.args, err, b.want)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
