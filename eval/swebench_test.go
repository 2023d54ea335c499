package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/eval"
)

// A SWE-Bench row runs end to end: the repository (a local mirror, as an
// offline run has it) at the row's base commit, the problem statement as
// the instruction, the test patch applied after the agent's work, and
// FAIL_TO_PASS and PASS_TO_PASS deciding, in each sandbox.
func TestSWEBenchRows(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			testSWEBench(t, sb.new(t))
		})
	}
}

func testSWEBench(t *testing.T, sandbox eval.Sandbox) {
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", mirror, "-c", "user.name=t", "-c", "user.email=t@t.invalid"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mirror, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(mirror, 0o755)
	git("init", "-q")
	write("calc.py", "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
	write("test_base.py", "import unittest\nfrom calc import mul\n\n\nclass TestMul(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	base := git("rev-parse", "HEAD")
	// A later commit breaks the passing test: only a checkout of the base
	// commit passes PASS_TO_PASS.
	write("calc.py", "def add(a, b):\n    return a - b\n")
	git("commit", "-q", "-am", "later")

	const testPatch = "diff --git a/test_calc.py b/test_calc.py\nnew file mode 100644\n--- /dev/null\n+++ b/test_calc.py\n@@ -0,0 +1,7 @@\n" +
		"+import unittest\n+from calc import add\n+\n+\n+class TestAdd(unittest.TestCase):\n+    def test_add(self):\n+        self.assertEqual(add(2, 3), 5)\n"
	row := func(id, statement string) []byte {
		b, _ := json.Marshal(map[string]any{
			"instance_id": id, "repo": "example/calc", "base_commit": base, "problem_statement": statement,
			"test_patch": testPatch,
			// As the datasets write them: JSON lists inside strings.
			"FAIL_TO_PASS": `["test_calc.TestAdd.test_add"]`, "PASS_TO_PASS": `["test_base.TestMul.test_mul"]`,
			"repo_url": "mirror", "test_command": "python3 -m unittest {tests}",
		})
		return append(b, '\n')
	}
	suite := filepath.Join(dir, "rows.jsonl")
	os.WriteFile(suite, append(row("calc-1", "#fix add() subtracts instead of adding"), row("calc-2", "#nofix add() subtracts instead of adding")...), 0o644)
	tasks, err := eval.Load(suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].Kind != eval.KindSWEBench || tasks[0].Repo.URL != mirror || tasks[0].Repo.Commit != base {
		t.Fatalf("loaded %+v", tasks[0])
	}

	pb, _ := json.Marshal(map[string]any{"rules": []any{
		map[string]any{"first_user": "#fix", "replies": []any{term("sed -i 's/a - b/a + b/' calc.py"), finishReply}},
		map[string]any{"first_user": "#nofix", "replies": []any{finishReply}},
	}})
	out := t.TempDir()
	s, err := eval.Run(context.Background(), tasks, []eval.Config{scripted(t, pb)}, &eval.Options{Out: out, Parallel: 2, Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*eval.Result{}
	for _, r := range s.Results {
		got[r.Task] = r
	}
	if r := got["calc-1"]; r == nil || !r.Success {
		log, _ := os.ReadFile(filepath.Join(out, "scripted", "calc-1", eval.VerifyLogFile))
		t.Errorf("calc-1: %+v\nverify.log:\n%s", r, log)
	}
	if r := got["calc-2"]; r == nil || r.Outcome != eval.OutcomeFailure || !strings.Contains(r.Reason, "the verifier failed") {
		t.Errorf("calc-2 (not fixed): %+v", r)
	}
	patch, err := os.ReadFile(filepath.Join(out, "scripted", "calc-1", eval.PatchFile))
	if err != nil || !strings.Contains(string(patch), "+    return a + b") || strings.Contains(string(patch), "test_calc") {
		t.Errorf("patch of calc-1 (%v):\n%s", err, patch)
	}
}
