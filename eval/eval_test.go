package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/eval"
	"github.com/gohands/gohands/eval/starter"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace/docker/dockertest"

	"github.com/gohands/gohands/internal/golden"
)

// The scripted model's key, read by the agent configurations (set once:
// the tests run in parallel).
func init() { os.Setenv("EVAL_TEST_KEY", "sk-eval-test") }

// scripted starts a scripted model answering from the playbook and returns
// an agent configuration using it.
func scripted(t *testing.T, playbook []byte) eval.Config {
	t.Helper()
	p, err := llmtest.ParsePlaybook(playbook)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewResponder(t, p.Respond, nil)
	cfg, err := eval.AgentSpec{Name: "scripted", Model: "openai/scripted", BaseURL: srv.URL + "/v1", APIKeyEnv: "EVAL_TEST_KEY"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sandboxes are the sandboxes the suites are tested in. The docker one
// shares this machine's network, where the scripted model listens.
var sandboxes = []struct {
	name string
	new  func(t *testing.T) eval.Sandbox
}{
	{"local", func(t *testing.T) eval.Sandbox { return &eval.LocalSandbox{} }},
	{"docker", func(t *testing.T) eval.Sandbox {
		o := dockertest.Options(t)
		o.Network = "host"
		return &eval.DockerSandbox{Options: o}
	}},
}

// TestStarterSuiteScripted: the scripted model solves the starter suite in
// each sandbox.
func TestStarterSuiteScripted(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			testStarterSuite(t, sb.new(t))
		})
	}
}

func testStarterSuite(t *testing.T, sandbox eval.Sandbox) {
	tasks, err := starter.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 4 {
		t.Fatalf("starter suite has %d tasks, want 4", len(tasks))
	}
	out := t.TempDir()
	var mu sync.Mutex
	var started []string
	s, err := eval.Run(context.Background(), tasks, []eval.Config{scripted(t, starter.Playbook())}, &eval.Options{
		Out: out, Parallel: 2, Sandbox: sandbox,
		OnStart: func(c, task string) { mu.Lock(); started = append(started, task); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 4 {
		t.Errorf("started %v, want the 4 tasks", started)
	}
	for _, r := range s.Results {
		if !r.Success {
			log, _ := os.ReadFile(filepath.Join(out, r.Config, r.Task, eval.VerifyLogFile))
			t.Errorf("%s: %s: %s\nverify.log:\n%s", r.Task, r.Outcome, r.Reason, log)
		}
		dir := filepath.Join(out, r.Config, r.Task)
		if patch, err := os.ReadFile(filepath.Join(dir, eval.PatchFile)); err != nil || len(patch) == 0 {
			t.Errorf("%s: no patch: %v", r.Task, err)
		}
		convs, err := os.ReadDir(filepath.Join(dir, eval.ConversationsDir))
		if err != nil || len(convs) != 1 {
			t.Errorf("%s: conversations: %v, %v", r.Task, convs, err)
		} else if _, err := os.Stat(filepath.Join(dir, eval.ConversationsDir, convs[0].Name(), "base_state.json")); err != nil {
			t.Errorf("%s: the conversation is not in the standard layout: %v", r.Task, err)
		}
		if r.Steps < 3 || r.PromptTokens == 0 {
			t.Errorf("%s: steps %d, prompt tokens %d", r.Task, r.Steps, r.PromptTokens)
		}
	}
	if c := s.Configs; len(c) != 1 || c[0].Solved != 4 || c[0].SuccessRate != 1 {
		t.Errorf("summary: %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(out, "scripted", "find-fact", eval.CollectedDir, "answer.txt")); err != nil || strings.TrimSpace(string(b)) != "8123" {
		t.Errorf("collected answer.txt: %q, %v", b, err)
	}
	md, err := os.ReadFile(filepath.Join(out, eval.SummaryMarkdown))
	if err != nil || !strings.Contains(string(md), "| scripted | openai/scripted | 4/4 | 100% |") {
		t.Errorf("summary.md:\n%s%v", md, err)
	}
}

// A patch keeps the tests' patch out: the hidden tests of implement-spec
// are not in the agent's patch.
func TestPatchIsTheAgentsWork(t *testing.T) {
	tasks, err := starter.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var spec []*eval.Task
	for _, tk := range tasks {
		if tk.ID == "implement-spec" {
			spec = append(spec, tk)
		}
	}
	out := t.TempDir()
	if _, err := eval.Run(context.Background(), spec, []eval.Config{scripted(t, starter.Playbook())}, &eval.Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile(filepath.Join(out, "scripted", "implement-spec", eval.PatchFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), "+import re") || strings.Contains(string(patch), "test_slug_hidden") {
		t.Errorf("patch:\n%s", patch)
	}
}

// A playbook's replies: a terminal command, and finish.
func term(cmd string) map[string]any {
	return map[string]any{"tool_calls": []any{map[string]any{"name": "terminal", "arguments": map[string]any{"command": cmd}}}}
}

var finishReply = map[string]any{"tool_calls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"message": "done"}}}}

// writeSuite writes task directories from manifests (id → task.json) with
// an empty repo each.
func writeSuite(t *testing.T, manifests map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for id, m := range manifests {
		if err := os.MkdirAll(filepath.Join(dir, id, "repo"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, id, "repo", "README"), []byte(id+"\n"), 0o644)
		if err := os.WriteFile(filepath.Join(dir, id, eval.ManifestName), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Each way a task can fail is recorded with its reason, and the suite goes
// on, in each sandbox.
func TestFailuresAreResults(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			t.Parallel()
			testFailures(t, sb.new(t))
		})
	}
}

func testFailures(t *testing.T, sandbox eval.Sandbox) {
	suite := writeSuite(t, map[string]string{
		"ok":             `{"instruction": "#ok write ok.txt", "verify": "test -f ok.txt"}`,
		"wrong":          `{"instruction": "#wrong do nothing", "verify": "test -f never.txt"}`,
		"slow":           `{"instruction": "#slow sleep", "verify": "true", "timeout": "2s"}`,
		"endless":        `{"instruction": "#endless think", "verify": "true", "max_steps": 3}`,
		"crashing":       `{"instruction": "#crashing verify", "verify": "kill -SEGV $$"}`,
		"missing":        `{"instruction": "#missing verify", "verify": "no-such-verifier-xyz"}`,
		"bad-setup":      `{"instruction": "#bad-setup", "setup": ["echo preparing", "exit 3"], "verify": "true"}`,
		"model-gives-up": `{"instruction": "#model-gives-up", "verify": "true"}`,
	})
	tasks, err := eval.Load(suite)
	if err != nil {
		t.Fatal(err)
	}
	finish := finishReply
	think := map[string]any{"tool_calls": []any{map[string]any{"name": "think", "arguments": map[string]any{"thought": "hmm"}}}}
	rules := []any{
		map[string]any{"first_user": "#ok", "replies": []any{term("touch ok.txt"), finish}},
		map[string]any{"first_user": "#wrong", "replies": []any{finish}},
		map[string]any{"first_user": "#slow", "replies": []any{term("sleep 30"), finish}},
		map[string]any{"first_user": "#endless", "replies": []any{think}, "loop": true},
		map[string]any{"first_user": "#crashing", "replies": []any{finish}},
		map[string]any{"first_user": "#missing", "replies": []any{finish}},
		map[string]any{"first_user": "#model-gives-up", "replies": []any{map[string]any{"fail": map[string]any{"status": 401, "message": "invalid key"}}}},
	}
	pb, _ := json.Marshal(map[string]any{"rules": rules})
	out := t.TempDir()
	s, err := eval.Run(context.Background(), tasks, []eval.Config{scripted(t, pb)}, &eval.Options{Out: out, Parallel: 4, Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		outcome eval.Outcome
		reason  string
	}{
		"ok":             {eval.OutcomeSuccess, ""},
		"wrong":          {eval.OutcomeFailure, "the verifier failed (exit 1)"},
		"slow":           {eval.OutcomeTimeout, "within 2s"},
		"endless":        {eval.OutcomeMaxSteps, "within 3 steps"},
		"crashing":       {eval.OutcomeVerifyError, "killed"},
		"missing":        {eval.OutcomeVerifyError, "could not run (exit 127)"},
		"bad-setup":      {eval.OutcomeSetupError, `"exit 3" exited with 3`},
		"model-gives-up": {eval.OutcomeAgentError, "invalid key"},
	}
	if len(s.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(s.Results), len(want))
	}
	for _, r := range s.Results {
		w := want[r.Task]
		if r.Outcome != w.outcome || !strings.Contains(r.Reason, w.reason) || r.Success != (w.outcome == eval.OutcomeSuccess) {
			t.Errorf("%s: %s %q, want %s with %q", r.Task, r.Outcome, r.Reason, w.outcome, w.reason)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "scripted", "bad-setup", eval.SetupLogFile)); err != nil || !strings.Contains(string(b), "preparing") {
		t.Errorf("setup.log: %q, %v", b, err)
	}
	if c := s.Configs[0]; c.Solved != 1 || c.Outcomes[eval.OutcomeVerifyError] != 2 {
		t.Errorf("summary: %+v", c)
	}
}

// A suite stopped midway resumes: finished tasks are not run again.
func TestResume(t *testing.T) {
	tasks, err := starter.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	cfg := scripted(t, starter.Playbook())
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first := 0
	_, err = eval.Run(ctx, tasks, []eval.Config{cfg}, &eval.Options{Out: out, OnResult: func(r *eval.Result) {
		first++
		cancel() // stop after the first task
	}})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted run: %v", err)
	}
	if first != 1 {
		t.Fatalf("%d results before the stop, want 1", first)
	}
	// A half-done task directory is redone, not taken as a result.
	os.MkdirAll(filepath.Join(out, "scripted", tasks[1].ID, "conversations"), 0o755)

	var resumed, ran []string
	s, err := eval.Run(context.Background(), tasks, []eval.Config{cfg}, &eval.Options{Out: out, OnResult: func(r *eval.Result) {
		if r.Resumed {
			resumed = append(resumed, r.Task)
		} else {
			ran = append(ran, r.Task)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed) != 1 || resumed[0] != tasks[0].ID || len(ran) != 3 {
		t.Errorf("resumed %v, ran %v", resumed, ran)
	}
	if s.Configs[0].Solved != 4 {
		t.Errorf("summary after resume: %+v", s.Configs[0])
	}
}

// The results' JSON is a stable interface: summary.json keeps its shape.
func TestSummaryGolden(t *testing.T) {
	tasks, err := starter.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := eval.Run(context.Background(), tasks, []eval.Config{scripted(t, starter.Playbook())}, &eval.Options{Out: out, Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, eval.SummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	// What varies from run to run: times, ids.
	got = regexp.MustCompile(`"(duration_ms)": \d+`).ReplaceAll(got, []byte(`"$1": 0`))
	got = regexp.MustCompile(`"conversation_id": "[^"]+"`).ReplaceAll(got, []byte(`"conversation_id": "ID"`))
	golden.Check(t, filepath.Join("testdata", "summary.golden.json"), got)
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ manifest, want string }{
		{`{"instruction": "x", "verfy": "true"}`, `unknown field "verfy"`},
		{`{"instruction": "", "verify": "true"}`, "no instruction"},
		{`{"instruction": "x"}`, "no verify command"},
		{`{"instruction": "x", "verify": "true", "kind": "bench"}`, `unknown kind "bench"`},
		{`{"instruction": "x", "verify": "true", "kind": "integration"}`, "lists its tools"},
		{`{"instruction": "x", "verify": "true", "hidden": "../secret"}`, "leaves the task directory"},
		{`{"instruction": "x", "verify": "true", "timeout": "soon"}`, "duration"},
	} {
		dir := writeSuite(t, map[string]string{"t": c.manifest})
		if _, err := eval.Load(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.manifest, err, c.want)
		}
	}
	if _, err := eval.Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no task directories") {
		t.Errorf("empty suite: %v", err)
	}
}
