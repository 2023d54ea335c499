package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// approvalScript is a model whose actions need judging: an edit of
// calc.py, a long new file, two harmless deletes and a HIGH risk one of
// the same program, then a last word; and the files they work on.
func approvalScript(t *testing.T, e *e2e) {
	t.Helper()
	var calc strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&calc, "line_%d = %d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(e.work, "calc.py"), []byte(calc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"scratch1.txt", "scratch2.txt"} {
		if err := os.WriteFile(filepath.Join(e.work, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(e.home, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	var big strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&big, "big line %d\n", i)
	}
	e.srv.Add(
		llmtest.Reply{Usage: llmtest.Usage{PromptTokens: 1200, CompletionTokens: 34}, ToolCalls: []llmtest.ToolCall{call("call_edit", "file_editor", map[string]any{
			"command": "str_replace", "path": filepath.Join(e.work, "calc.py"), "old_str": "line_15 = 15\n", "new_str": "line_15 = 1500\n"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_big", "file_editor", map[string]any{
			"command": "create", "path": filepath.Join(e.work, "big.txt"), "file_text": big.String()})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_rm1", "terminal", map[string]any{"command": "rm -f scratch1.txt"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_rm2", "terminal", map[string]any{"command": "rm -f scratch2.txt"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_rm3", "terminal", map[string]any{"command": "rm -rf ~/keep"})}},
		llmtest.Reply{Text: "All done."},
	)
}

// checkApprovals checks what the approvals of approvalScript did.
func checkApprovals(t *testing.T, e *e2e) {
	t.Helper()
	calc, _ := os.ReadFile(filepath.Join(e.work, "calc.py"))
	if !strings.Contains(string(calc), "line_15 = 1500\n") {
		t.Errorf("the approved edit was not made:\n%s", calc)
	}
	if _, err := os.Stat(filepath.Join(e.work, "big.txt")); err != nil {
		t.Errorf("the approved file was not created: %v", err)
	}
	for _, f := range []string{"scratch1.txt", "scratch2.txt"} {
		if _, err := os.Stat(filepath.Join(e.work, f)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: the delete covered by \"always\" did not run (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "keep")); err != nil {
		t.Errorf("the HIGH risk delete ran though it was answered no: %v", err)
	}
}

// TestLineModeApprovals: in --no-tui line mode, the question shows the
// diff of an edit before the answer, a long one cut with "d" to see it
// whole; "a" covers later commands of the same program only, and a HIGH
// risk one of that program is asked about still (issue 32 item 1).
func TestLineModeApprovals(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	approvalScript(t, e)
	e.stdin = "fix it\ny\nd\ny\na\nn\n/exit\n"
	p := e.start("--no-tui", "--persistence-dir", e.data, "--llm-config", e.config)
	r := p.wait(2 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout
	// The edit's diff comes before its question.
	edit := strings.Index(out, "Confirm file_editor (risk")
	if edit < 0 {
		t.Fatalf("no question about the edit:\n%s", out)
	}
	q := strings.Index(out[edit:], "Run?")
	for _, want := range []string{"@@ -13,5 +13,5 @@", "-line_15 = 15", "+line_15 = 1500", " line_14 = 14"} {
		if i := strings.Index(out[edit:], want); i < 0 || i > q {
			t.Errorf("the edit's question does not show %q before the choice:\n%s", want, out[edit:edit+q])
		}
	}
	// The long new file: named as new, its header counting its 60 lines
	// (the last newline ends a line, it is none of its own); cut, then
	// whole after "d".
	flat := regexp.MustCompile(`(?m)^ +`).ReplaceAllString(out, "") // the preview is indented
	if !strings.Contains(flat, "new file "+filepath.Join(e.work, "big.txt")+"\n@@ -0,0 +1,60 @@\n+big line 1\n") {
		t.Errorf("the new file's preview does not start with its header:\n%s", out)
	}
	if !strings.Contains(out, "more lines (answer d to see all)") || !strings.Contains(out, "[d] show all") {
		t.Errorf("the long preview is not cut with a way to see it all:\n%s", out)
	}
	if !strings.Contains(out, "+big line 60") {
		t.Errorf("\"d\" did not show the whole new file:\n%s", out)
	}
	if !strings.Contains(out, "[a]lways for `rm` commands in this session") {
		t.Errorf("the \"always\" choice does not say what it covers:\n%s", out)
	}
	if strings.Contains(out, "rm -f scratch2.txt\nRun?") || strings.Count(out, "Confirm terminal") != 2 {
		t.Errorf("want questions about rm -f scratch1.txt and rm -rf ~/keep only (%d terminal questions):\n%s", strings.Count(out, "Confirm terminal"), out)
	}
	if !strings.Contains(out, "Confirm terminal (risk HIGH): rm -rf ~/keep") {
		t.Errorf("the HIGH risk delete was not asked about:\n%s", out)
	}
	checkApprovals(t, e)
}

// TestTUIApprovals: the same in the full-screen interface: the panel
// shows the diff before the choice, "d" shows a long preview whole, and
// "a" is scoped, HIGH risk excepted (issue 32 item 1).
func TestTUIApprovals(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	approvalScript(t, e)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "approve", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")
	s.typeLine("fix it")
	// The status line counts the tokens of the run so far (issue 32
	// item 8: it showed 0 until a run finished).
	scr := s.waitFor("file_editor (risk", "-line_15 = 15", "+line_15 = 1500", "y yes", "1.2k tokens")
	t.Logf("the edit's panel:\n%s", scr)
	s.keys("y")
	scr = s.waitFor("big.txt", "+big line 1", "(d shows all)")
	if strings.Contains(scr, "+big line 60") {
		t.Errorf("the long preview is not cut:\n%s", scr)
	}
	s.keys("d")
	scr = s.waitFor("+big line 60", "y yes")
	t.Logf("after d:\n%s", scr)
	s.keys("y")
	s.waitFor("rm -f scratch1.txt", "always for `rm` commands", "never covers HIGH risk")
	s.keys("a")
	scr = s.waitFor("rm -rf ~/keep", "risk HIGH", "y yes")
	if strings.Contains(scr, "rm -f scratch2.txt (risk") {
		t.Errorf("the second delete was asked about after \"always\":\n%s", scr)
	}
	s.keys("n")
	s.waitFor("All done.")
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit status %s; stderr:\n%s", code, stderr)
	}
	checkApprovals(t, e)
}

// TestLineModeInterruptAtQuestion: in --no-tui line mode on a terminal,
// Ctrl-C at a question leaves it unanswered (nothing runs, nothing is
// rejected), the next message asks again, Ctrl-D there does the same,
// and the prompt still reads after it: /exit leaves (issue 32 item 5).
func TestLineModeInterruptAtQuestion(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	marker := filepath.Join(e.work, "marker")
	e.srv.Add(touchReplies(marker)[0])
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "linemode", "--no-tui", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor(">")
	s.typeLine("touch the marker")
	s.waitFor("Run? [y]es")
	s.keys("C-c")
	s.waitFor("(paused: the actions still wait for your answer")
	s.typeLine("go on")
	for deadline := time.Now().Add(time.Minute); strings.Count(s.capture(), "Run? [y]es") < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the next message did not ask again:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Ctrl-D leaves the second question unanswered too, the message
	// held.
	s.keys("C-d")
	scr := s.waitFor("(not sent: go on)")
	if n := strings.Count(scr, "(paused: the actions"); n != 2 {
		t.Errorf("%d pauses shown, want 2:\n%s", n, scr)
	}
	s.typeLine("/exit")
	code, stderr := s.exited()
	if code != "0" {
		t.Fatalf("exit status %s; stderr:\n%s\nscreen:\n%s", code, stderr, s.capture())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the unanswered command ran")
	}
	infos, err := listConversations(e.data, func(string, error) {})
	if err != nil || len(infos) != 1 || infos[0].Status != "waiting_for_confirmation" {
		t.Errorf("stored %+v (%v), want one conversation still waiting", infos, err)
	}
}
