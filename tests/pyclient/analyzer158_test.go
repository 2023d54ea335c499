package pyclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestAnalyzer158Continued moves a conversation with a security analyzer
// from the reference 1.58.2 to gohands and back, on disk
// (testdata/analyzer158.py is the reference's side):
//
//  1. The reference runs a conversation to its finish with a
//     PatternSecurityAnalyzer and ConfirmRisky: its terminal call is
//     rated, a SecurityAnalysisEvent on disk.
//  2. `gohands run --conversation-id` continues it with a new task to its
//     finish: one more terminal call, rated by the stored analyzer.
//  3. The reference reads it back: every event loads and re-dumps to its
//     bytes, base_state.json has no field the reference does not know,
//     nothing warns, and the analyzer, the policy and the agent are the
//     ones it wrote — gohands kept them, neither dropped nor replaced by
//     its own.
func TestAnalyzer158Continued(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	bin := gohandsBinary(t)
	// Both sides' requests: a user's last word gets a terminal call, a
	// tool result gets the finish.
	m := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		msgs, _ := r.Body["messages"].([]any)
		var last map[string]any
		if len(msgs) > 0 {
			last, _ = msgs[len(msgs)-1].(map[string]any)
		}
		if last["role"] == "user" {
			b, _ := json.Marshal(last)
			cmd := "ls"
			if bytes.Contains(b, []byte("GOHANDS-NEXT")) {
				cmd = "echo gohands-step"
			}
			args, _ := json.Marshal(map[string]string{"command": cmd, "security_risk": "LOW"})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_" + strings.ReplaceAll(cmd, " ", "_"), Name: "terminal", Arguments: string(args)}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)

	base, work, home := t.TempDir(), t.TempDir(), t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a hang guard
	defer cancel()
	ref := exec.CommandContext(ctx, py, filepath.Join("testdata", "analyzer158.py"), m.URL, base, work)
	ref.Env = refenv.Env(home)
	var refErr bytes.Buffer
	ref.Stderr = &refErr
	stdin, err := ref.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := ref.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	defer ref.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(stdout)
	var out bytes.Buffer
	wrote := regexp.MustCompile(`^wrote ([0-9a-f-]{36}) (\w+)$`)
	var id string
	for id == "" && lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if w := wrote.FindStringSubmatch(lines.Text()); w != nil {
			if w[2] != "finished" {
				t.Fatalf("the reference's run ended %s:\n%s", w[2], out.String())
			}
			id = w[1]
		}
	}
	if id == "" {
		stdin.Close()
		ref.Wait()
		t.Fatalf("the reference 1.58.2 wrote no conversation:\n%s%s", out.String(), refErr.String())
	}
	dir := filestore.Dir(base, id)
	before := stateFields(t, dir)
	if !bytes.Contains(before["security_analyzer"], []byte(`"kind":"PatternSecurityAnalyzer"`)) {
		t.Fatalf("the reference stored the analyzer %s", before["security_analyzer"])
	}
	refEvents := eventKinds(t, dir)

	run := exec.CommandContext(ctx, bin, "run", "--conversation-id", id, "--persistence-dir", base, "--workspace", work,
		"--api-key", "scripted", "--json", "GOHANDS-NEXT: one more step")
	run.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	gout, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("gohands run --conversation-id (a 1.58.2 conversation with an analyzer): %v\n%s", err, gout)
	}
	after := stateFields(t, dir)
	for _, k := range []string{"security_analyzer", "confirmation_policy"} {
		if !jsonEqual(before[k], after[k]) {
			t.Errorf("gohands changed the stored %s:\n was %s\n now %s", k, before[k], after[k])
		}
	}
	added := eventKinds(t, dir)[len(refEvents):]
	want := []string{"MessageEvent", "SecurityAnalysisEvent", "ActionEvent", "ObservationEvent", "ActionEvent", "ObservationEvent"}
	if !reflect.DeepEqual(added, want) {
		t.Errorf("gohands added %v, want %v", added, want)
	}

	stdin.Write([]byte("go\n"))
	stdin.Close()
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
	}
	if err := ref.Wait(); err != nil || !strings.Contains(out.String(), "ok [") {
		t.Fatalf("the reference 1.58.2 does not read back the conversation gohands continued: %v\n%s%s", err, out.String(), refErr.String())
	}
	// Two analyses, the reference's and gohands', by the same analyzer.
	if !strings.Contains(out.String(), "analyses ['PatternSecurityAnalyzer', 'PatternSecurityAnalyzer']") {
		t.Errorf("the reference reads these analyses:\n%s", out.String())
	}
}

// stateFields returns the top-level fields of a conversation's base_state.json.
func stateFields(t *testing.T, dir string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("base_state.json: %v", err)
	}
	return f
}

// eventKinds returns the kinds of a conversation's event files, in order.
func eventKinds(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, filestore.EventsDir, "event-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Kind string }
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
