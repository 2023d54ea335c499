package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// highRiskReplies script a model that deletes a directory of the home,
// then touches marker in the workspace, then finishes.
func highRiskReplies(marker string) []llmtest.Reply {
	return []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{call("call_rm", "terminal", map[string]any{"command": "rm -rf ~/keep"})}},
		{ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch " + marker})}},
		finishReply("done"),
	}
}

// gohands run, with nobody to ask (standard input and output pipes, no
// --confirm), refuses a HIGH risk command instead of running it: the
// model is told why, the harmless command after it runs, the --json
// result lists the refusal and the exit status is 6. --allow-high-risk
// runs it as before (issue 32 item 2).
func TestE2EHeadlessRefusesHighRisk(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	keep := filepath.Join(e.home, "keep")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.work, "marker")
	e.srv.Add(highRiskReplies(marker)...)
	r := e.mustRun(exitRefused, e.args("--json", "clean up")...)

	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the HIGH risk command ran: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the harmless command after it did not run: %v", err)
	}
	if !strings.Contains(r.stderr, "refused terminal `rm -rf ~/keep` (risk HIGH)") {
		t.Errorf("stderr does not report the refusal:\n%s", r.stderr)
	}
	var res runResult
	if err := json.Unmarshal([]byte(lastLine(r.stdout)), &res); err != nil {
		t.Fatalf("last line is not the result: %v\n%s", err, r.stdout)
	}
	want := []refusedAction{{Tool: "terminal", Action: "rm -rf ~/keep", Risk: "HIGH"}}
	if len(res.Refused) != 1 || res.Refused[0] != want[0] {
		t.Errorf("result's refused = %+v, want %+v", res.Refused, want)
	}
	if res.Status != "finished" || !strings.Contains(res.Error, "refused") {
		t.Errorf("result status %q error %q, want finished and the refusal", res.Status, res.Error)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	ids, texts := toolResults(t, reqs[1])
	if len(ids) != 1 || ids[0] != "call_rm" || !strings.Contains(texts[0], "does not run HIGH risk actions unattended") {
		t.Errorf("the model was told %v %q, want the refusal of call_rm", ids, texts)
	}
	evs, _ := e.events()
	rej := ofKind[*event.UserRejectObservation](evs)
	if len(rej) != 1 || rej[0].ToolCallID != "call_rm" {
		t.Errorf("stored rejections %+v, want one of call_rm", rej)
	}

	// The old behaviour, asked for.
	e2 := newE2E(t)
	e2.home = e.home
	e2.env = append(e2.env, "HOME="+e.home)
	e2.srv.Add(highRiskReplies(filepath.Join(e2.work, "marker"))...)
	r = e2.mustRun(0, e2.args("--allow-high-risk", "clean up")...)
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Errorf("with --allow-high-risk the command did not run (stat: %v)\n%s", err, r.stderr)
	}
	if strings.Contains(r.stderr, "refused") {
		t.Errorf("with --allow-high-risk something was refused:\n%s", r.stderr)
	}
}

// The default and the flag are documented in run --help.
func TestE2ERunHelpSafety(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.mustRun(0, "run", "--help")
	for _, want := range []string{"--allow-high-risk", "refused", "6 when the agent finished but HIGH risk actions were refused"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
}
