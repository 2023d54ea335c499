package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// In confirmation mode the PreToolUse hooks judge the actions when they
// are stored, before the user is asked (as 1.58.2 does): each hook run is
// stored before its action, a blocked action is answered with the hook's
// rejection at once and is never waited on, and confirming runs the rest
// without running the hooks again. A reply whose only action is blocked
// asks nothing.
func TestPreToolUseHookInConfirmationMode(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no user-level hooks
	work := t.TempDir()
	runs := filepath.Join(work, "hook-runs")
	hooks := fmt.Sprintf(`{"PreToolUse":[{"matcher":"terminal","hooks":[{"command":"echo run >> %s; if grep -q forbidden; then echo 'not that' >&2; exit 2; fi"}]}]}`, runs)
	call := func(id, cmd string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: terminal.Name, Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}
	}
	hookRuns := func() int {
		b, _ := os.ReadFile(runs)
		return len(b) / len("run\n")
	}
	newConfirmConv := func(replies ...llmtest.Reply) *conversation.LocalConversation {
		a, _ := newAgent(t, replies...)
		a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
		c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
			ConfirmationPolicy: &security.AlwaysConfirm{}, HookConfig: []byte(hooks)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.SendMessage(ctx, event.UserMessage("go")); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// shape describes the events after the user's message: kind, and for
	// hook runs and answers the call they are about.
	shape := func(c *conversation.LocalConversation) []string {
		var out []string
		started := false
		for _, e := range logEvents(t, c) {
			switch e := e.(type) {
			case *event.MessageEvent:
				started = started || e.Source == event.SourceUser
				if started && e.Source != event.SourceUser {
					out = append(out, "message")
				}
			case *event.HookExecutionEvent:
				out = append(out, "hook:"+e.ToolName)
			case *event.ActionEvent:
				out = append(out, "action:"+e.ToolCallID)
			case *event.UserRejectObservation:
				out = append(out, "rejected:"+e.ToolCallID+":"+string(e.RejectionSource))
			case *event.ObservationEvent:
				out = append(out, "observed:"+e.ToolCallID)
			}
		}
		return out
	}

	c := newConfirmConv(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("ok", "echo fine"), call("bad", "echo forbidden")}},
		llmtest.Reply{Text: "Done."})
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); st != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s, want waiting for confirmation", st)
	}
	want := []string{"hook:terminal", "action:ok", "hook:terminal", "action:bad", "rejected:bad:hook"}
	if got := shape(c); !slices.Equal(got, want) {
		t.Fatalf("stored before confirmation:\n got %q\nwant %q", got, want)
	}
	if n := hookRuns(); n != 2 {
		t.Fatalf("the hook ran %d times before confirmation, want 2", n)
	}
	if err := c.Run(ctx); err != nil { // confirms
		t.Fatal(err)
	}
	want = append(want, "observed:ok", "message")
	if got := shape(c); !slices.Equal(got, want) || c.Status() != conversation.StatusFinished {
		t.Fatalf("after confirmation (%s):\n got %q\nwant %q", c.Status(), got, want)
	}
	if n := hookRuns(); n != 2 {
		t.Fatalf("the hook ran %d times in all, want 2 (not again once confirmed)", n)
	}

	// Only a blocked action: nothing to confirm, the model reads the
	// rejection and goes on.
	os.Remove(runs)
	c = newConfirmConv(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("bad2", "echo forbidden")}},
		llmtest.Reply{Text: "Done."})
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want = []string{"hook:terminal", "action:bad2", "rejected:bad2:hook", "message"}
	if got := shape(c); !slices.Equal(got, want) || c.Status() != conversation.StatusFinished {
		t.Fatalf("a blocked action alone (%s):\n got %q\nwant %q", c.Status(), got, want)
	}
}
