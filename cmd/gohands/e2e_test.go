package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/terminal"
)

// The model writes a Python program with the file editor, runs it in the
// terminal and finishes; the file is on disk, the program's output in the
// events, and --json printed the events exactly as stored.
func TestE2ECreateFileAndRunIt(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	e := newE2E(t)
	script := filepath.Join(e.work, "hello.py")
	e.srv.Add(
		llmtest.Reply{Text: "I'll write the program.", ToolCalls: []llmtest.ToolCall{call("call_1", "file_editor", map[string]any{
			"command": "create", "path": script, "file_text": "print('hello from', 6 * 7)\n",
		})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_2", "terminal", map[string]any{"command": "python3 hello.py"})}},
		finishReply("Wrote hello.py and ran it."),
	)
	r := e.mustRun(0, e.args("--json", "Write hello.py that prints a greeting, and run it")...)

	got, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "print('hello from', 6 * 7)\n" {
		t.Errorf("hello.py = %q", got)
	}
	evs, raws := e.events()
	obs := ofKind[*event.ObservationEvent](evs)
	if len(obs) != 3 {
		t.Fatalf("%d observations, want 3: %v", len(obs), kinds(evs))
	}
	if _, ok := obs[0].Observation.(*fileeditor.Observation); !ok {
		t.Errorf("first observation is %T, want the file editor's", obs[0].Observation)
	}
	to, ok := obs[1].Observation.(*terminal.Observation)
	if !ok {
		t.Fatalf("second observation is %T, want the terminal's", obs[1].Observation)
	}
	if text := event.TextOf(to.Content); !strings.Contains(text, "hello from 42") {
		t.Errorf("terminal output = %q, want the program's output", text)
	}
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}
	// The model saw the program's output.
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	ids, texts := toolResults(t, reqs[2])
	if len(ids) != 2 || ids[1] != "call_2" || !strings.Contains(texts[1], "hello from 42") {
		t.Errorf("third request's tool results = %v %q", ids, texts)
	}
	// --json: one line per event, byte for byte as persisted, then the
	// result record.
	lines := strings.Split(r.stdout, "\n")
	var res runResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if res.Type != "result" || res.Status != "finished" || res.ConversationID != e.id || res.Steps != 3 ||
		res.FinalMessage != "Wrote hello.py and ran it." || res.Workspace != e.work {
		t.Errorf("result record %+v", res)
	}
	lines = lines[:len(lines)-1]
	if len(lines) != len(raws) {
		t.Fatalf("%d JSON lines on stdout, %d events stored", len(lines), len(raws))
	}
	for i, raw := range raws {
		if !bytes.Equal(bytes.TrimSpace(raw), []byte(lines[i])) {
			t.Errorf("line %d differs from the stored event:\nstdout: %s\nstored: %s", i, lines[i], raw)
		}
	}
	if !strings.Contains(r.stderr, "starting conversation "+e.id) {
		t.Errorf("stderr does not name the conversation:\n%s", r.stderr)
	}
}

// The transcript (no --json) shows the actions and their results.
func TestE2ETranscript(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{"command": "echo transcript-$((40+2))"})}},
		finishReply("All done here."),
	)
	r := e.mustRun(0, e.args("say something")...)
	for _, want := range []string{"say something", "$ echo transcript-$((40+2))", "transcript-42", "All done here."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("transcript lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("transcript to a pipe has colour codes")
	}
}

// Several tool calls in one reply all run, and their results are
// committed and sent back in the order of the calls.
func TestE2EParallelToolCalls(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			call("call_a", "file_editor", map[string]any{"command": "create", "path": filepath.Join(e.work, "a.txt"), "file_text": "A\n"}),
			call("call_b", "file_editor", map[string]any{"command": "create", "path": filepath.Join(e.work, "b.txt"), "file_text": "B\n"}),
			call("call_c", "terminal", map[string]any{"command": "echo third"}),
			call("call_d", "think", map[string]any{"thought": "all three are done"}),
		}},
		finishReply("Created a.txt and b.txt."),
	)
	e.mustRun(0, e.args("--json", "create two files")...)
	for _, n := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(e.work, n)); err != nil {
			t.Error(err)
		}
	}
	evs, _ := e.events()
	var order []string
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		order = append(order, o.ToolCallID)
	}
	if want := []string{"call_a", "call_b", "call_c", "call_d", "call_finish"}; !slices.Equal(order, want) {
		t.Errorf("observations in order %v, want %v", order, want)
	}
	ids, _ := toolResults(t, e.srv.Requests()[1])
	if want := []string{"call_a", "call_b", "call_c", "call_d"}; !slices.Equal(ids, want) {
		t.Errorf("tool results sent back in order %v, want %v", ids, want)
	}
}

// Malformed arguments and an unknown tool are reported to the model,
// which recovers and finishes.
func TestE2EBadToolCallsRecover(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_bad", "terminal", `{"command": "echo hi"`)}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_unknown", "launch_rocket", map[string]any{"target": "moon"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_ok", "terminal", map[string]any{"command": "echo recovered"})}},
		finishReply("Recovered."),
	)
	e.mustRun(0, e.args("--json", "do it")...)
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	ids, texts := toolResults(t, reqs[1])
	if len(ids) != 1 || ids[0] != "call_bad" || !strings.Contains(strings.ToLower(texts[0]), "json") {
		t.Errorf("after malformed arguments the model got %v %q, want an error about the JSON", ids, texts)
	}
	ids, texts = toolResults(t, reqs[2])
	if len(ids) != 2 || ids[1] != "call_unknown" || !strings.Contains(texts[1], "launch_rocket") {
		t.Errorf("after an unknown tool the model got %v %q, want an error naming it", ids, texts)
	}
	evs, _ := e.events()
	if n := len(ofKind[*event.AgentErrorEvent](evs)); n != 2 {
		t.Errorf("%d agent errors, want 2: %v", n, kinds(evs))
	}
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}
}

// A server error is retried, and the run goes on.
func TestE2ERetryAfterServerError(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Fail(500, "upstream exploded"),
		finishReply("Fine after all."),
	)
	r := e.mustRun(0, e.args("--json", "hello")...)
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if !strings.Contains(r.stderr, "retrying") {
		t.Errorf("stderr does not report the retry:\n%s", r.stderr)
	}
	evs, _ := e.events()
	if n := len(ofKind[*event.ConversationErrorEvent](evs)); n != 0 {
		t.Errorf("%d conversation errors, want none", n)
	}
}

// A model that keeps failing ends the run with status error, exit 1 and
// the reason on one line.
func TestE2EModelFailure(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Fail(401, "bad key"))
	r := e.mustRun(exitError, e.args("hello")...)
	last := lastLine(r.stderr)
	if !strings.HasPrefix(last, "gohands: error: LLMAuthenticationError: ") {
		t.Errorf("last stderr line = %q, want the error", last)
	}
	if e.status() != "error" {
		t.Errorf("status %s, want error", e.status())
	}
}

// --max-iterations ends a run that does not finish with exit 4.
func TestE2EMaxIterations(t *testing.T) {
	t.Parallel()
	think := func(s string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("", "think", map[string]any{"thought": s})}}
	}
	e := newE2E(t, think("one"), think("two"))
	r := e.mustRun(exitMaxIter, e.args("--max-iterations", "2", "think")...)
	if last := lastLine(r.stderr); !strings.Contains(last, "MaxIterationsReached") {
		t.Errorf("last stderr line = %q", last)
	}
}

// A model repeating itself is stopped as stuck, with exit 3 and the reason.
func TestE2EStuck(t *testing.T) {
	t.Parallel()
	same := llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("", "terminal", map[string]any{"command": "echo same"})}}
	e := newE2E(t, same, same, same, same)
	r := e.mustRun(exitStuck, e.args("loop")...)
	if last := lastLine(r.stderr); !strings.HasPrefix(last, "gohands: stuck:") {
		t.Errorf("last stderr line = %q", last)
	}
	if e.status() != "stuck" {
		t.Errorf("status %s, want stuck", e.status())
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// An interrupt during a long command pauses the conversation: the command
// is stopped, the run ends with exit 130 and a hint, and running the
// conversation again finishes it, the model told of the interruption.
func TestE2EPauseDuringLongCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_sleep", "terminal", map[string]any{
		"command": "touch started && sleep 30 && touch slept", "timeout": 60,
	})}})
	p := e.start(e.args("--json", "wait a while")...)
	p.waitFile(filepath.Join(e.work, "started"), time.Minute)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.wait(20 * time.Second)
	if r.code != exitPaused {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitPaused, r.stderr)
	}
	want := "gohands: paused by interrupt; continue with: gohands run --conversation-id " + e.id
	if last := lastLine(r.stderr); !strings.HasPrefix(last, want) {
		t.Errorf("last stderr line = %q, want %q", last, want)
	}
	if e.status() != "paused" {
		t.Errorf("status %s, want paused", e.status())
	}
	evs, _ := e.events()
	if len(ofKind[*event.PauseEvent](evs)) != 1 {
		t.Errorf("no PauseEvent: %v", kinds(evs))
	}

	e.srv.Add(finishReply("Resumed and done."))
	r = e.mustRun(0, e.args("--json")...)
	if !strings.Contains(r.stderr, "continuing conversation "+e.id) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	ids, texts := toolResults(t, e.srv.LastRequest())
	// Depending on which comes first, the agent answers the call as
	// interrupted or the terminal reports it cancelled.
	if len(ids) != 1 || ids[0] != "call_sleep" || !strings.Contains(strings.ToLower(texts[0]), "interrupt") && !strings.Contains(strings.ToLower(texts[0]), "cancel") {
		t.Errorf("after the pause the model got %v %q, want the interrupted call answered", ids, texts)
	}
	if _, err := os.Stat(filepath.Join(e.work, "slept")); err == nil {
		t.Error("the interrupted command ran to its end")
	}
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}
}

// A process killed with SIGKILL mid-run loses nothing: every event it
// printed is stored, and the next run answers the action cut short and
// finishes.
func TestE2EKillAndResume(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{"command": "echo first"})}},
		llmtest.Reply{Text: "Now the long part.", ToolCalls: []llmtest.ToolCall{call("call_2", "terminal", map[string]any{
			"command": "touch started && sleep 30", "timeout": 60,
		})}},
	)
	p := e.start(e.args("--json", "do two things")...)
	p.waitFile(filepath.Join(e.work, "started"), time.Minute)
	// ls reads a conversation that is running without waiting for it.
	if r := e.mustRun(0, "ls", "--persistence-dir", e.data); !strings.Contains(r.stdout, e.id+"  running") {
		t.Errorf("ls during the run:\n%s", r.stdout)
	}
	// A second process cannot run it at the same time.
	if r := e.mustRun(exitError, e.args("--json", "meddle")...); !strings.Contains(r.stderr, "in use by another process") {
		t.Errorf("second process: %s", r.stderr)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(20 * time.Second)
	printed := p.snapshot()
	if e.status() != "running" {
		t.Errorf("status after SIGKILL %s, want running", e.status())
	}
	before, raws := e.events()
	if len(raws) < len(printed) {
		t.Fatalf("%d events printed, only %d stored", len(printed), len(raws))
	}
	for i, line := range printed {
		if !bytes.Equal(bytes.TrimSpace(raws[i]), []byte(line)) {
			t.Errorf("printed event %d is not the stored one:\n%s\n%s", i, line, raws[i])
		}
	}

	e.srv.Add(finishReply("Done after the crash."))
	e.mustRun(0, e.args("--json")...)
	after, _ := e.events()
	for i, ev := range before {
		if after[i].EventBase().ID != ev.EventBase().ID {
			t.Fatalf("event %d changed on resume: %s, was %s", i, after[i].EventBase().ID, ev.EventBase().ID)
		}
	}
	ids, _ := toolResults(t, e.srv.LastRequest())
	if want := []string{"call_1", "call_2"}; !slices.Equal(ids, want) {
		t.Errorf("after resume the model got results for %v, want %v", ids, want)
	}
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}
}

// Secrets reach the commands that name them, and their values appear
// nowhere else: not on stdout or stderr, not in any stored file, not in
// what the model is sent.
func TestE2ESecretNeverLeaks(t *testing.T) {
	t.Parallel()
	const envValue = "tok-9f8e7d6c5b4a-ENVSECRET"
	const flagValue = "pw-1a2b3c4d5e6f-FLAGSECRET"
	for _, jsonMode := range []bool{false, true} {
		t.Run(map[bool]string{false: "transcript", true: "json"}[jsonMode], func(t *testing.T) {
			e := newE2E(t,
				// A command naming no secret gets none, nor the model's key.
				// (Once exported, secrets stay in the persistent shell.)
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{
					"command": `echo "count=$(env | grep -c -e tok-9f8e -e pw-1a2b -e sk-e2e) key=[$LLM_API_KEY]"`,
				})}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_2", "terminal", map[string]any{
					"command": `echo "a=$DEPLOY_TOKEN b=$API_PASSWORD" > out.txt && cat out.txt`,
				})}},
				finishReply("Used the secrets."),
			)
			e.env = append(e.env, "DEPLOY_TOKEN="+envValue)
			args := e.args("--secret", "DEPLOY_TOKEN", "--secret", "API_PASSWORD="+flagValue, "use the secrets")
			if jsonMode {
				args = append([]string{args[0], "--json"}, args[1:]...)
			}
			r := e.mustRun(0, args...)
			got, err := os.ReadFile(filepath.Join(e.work, "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "a=" + envValue + " b=" + flagValue + "\n"; string(got) != want {
				t.Errorf("the command wrote %q, want %q", got, want)
			}
			// The model's API key is a secret too.
			check := func(where, s string) {
				t.Helper()
				for _, v := range []string{envValue, flagValue, "sk-e2e-test-key"} {
					if strings.Contains(s, v) {
						t.Errorf("%s contains the secret %q", where, v)
					}
				}
			}
			if !strings.Contains(r.stdout, "count=0 key=[]") {
				t.Errorf("a command naming no secret got secrets or the model's key:\n%s", r.stdout)
			}
			check("stdout", r.stdout)
			check("stderr", r.stderr)
			if !strings.Contains(r.stdout, "<secret-hidden>") {
				t.Errorf("stdout does not show the masked output:\n%s", r.stdout)
			}
			files := 0
			filepath.WalkDir(e.data, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return nil
				}
				files++
				check(path, string(b))
				return nil
			})
			if files < 3 {
				t.Errorf("only %d stored files checked", files)
			}
			for i, req := range e.srv.Requests() {
				check(fmt.Sprintf("model request %d", i), string(req.RawBody))
			}
		})
	}
}

// ls lists stored conversations, from the default persistence directory
// too.
func TestE2EList(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("one"), llmtest.Fail(400, "nope"))
	// Without --workspace the agent works in the current directory.
	e.mustRun(0, "run", "--conversation-id", e.id, "first task\nwith two lines")
	b, err := os.ReadFile(filepath.Join(e.home, "gohands", "conversations", strings.ReplaceAll(e.id, "-", ""), "base_state.json"))
	if err != nil {
		t.Fatalf("not stored under $XDG_DATA_HOME/gohands/conversations: %v", err)
	}
	var bs struct {
		Workspace struct {
			WorkingDir string `json:"working_dir"`
		} `json:"workspace"`
	}
	if err := json.Unmarshal(b, &bs); err != nil || bs.Workspace.WorkingDir != e.work {
		t.Errorf("workspace %q (%v), want the current directory %s", bs.Workspace.WorkingDir, err, e.work)
	}
	other := uuid.NewString()
	e.mustRun(exitError, "run", "--workspace", e.work, "--conversation-id", other, "second task")
	r := e.mustRun(0, "ls")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("ls printed:\n%s", r.stdout)
	}
	// Most recently updated first.
	if !strings.HasPrefix(lines[1], other) || !strings.Contains(lines[1], "error") || !strings.Contains(lines[1], "second task") {
		t.Errorf("ls line 1 = %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], e.id) || !strings.Contains(lines[2], "finished") || !strings.Contains(lines[2], "first task with two lines") {
		t.Errorf("ls line 2 = %q", lines[2])
	}

	r = e.mustRun(0, "ls", "--json")
	var infos []convInfo
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[1].ID != e.id || infos[1].Model != "openai/gpt-4o" || infos[1].Events < 4 || infos[1].CreatedAt == "" || infos[1].CreatedAt > infos[1].UpdatedAt {
		t.Errorf("ls --json = %+v", infos)
	}
	r = e.mustRun(0, "ls", "--persistence-dir", t.TempDir())
	if r.stdout != "" || !strings.Contains(r.stderr, "no conversations") {
		t.Errorf("ls of an empty directory: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

// BenchmarkRunBinary measures one whole `gohands run`: process start, a new
// stored conversation, one scripted model call (finish) and exit.
func BenchmarkRunBinary(b *testing.B) {
	srv := llmtest.NewChat(b)
	data, work := b.TempDir(), b.TempDir()
	env := append(os.Environ(), "LLM_MODEL=openai/gpt-4o", "LLM_API_KEY=k", "LLM_BASE_URL="+srv.URL+"/v1", "NO_COLOR=1")
	for b.Loop() {
		srv.Add(finishReply("done"))
		cmd := exec.Command(binPath, "run", "--json", "--persistence-dir", data, "--workspace", work, "finish at once")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}
