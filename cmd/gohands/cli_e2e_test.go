package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/preset"
)

// withoutEnv returns env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			if name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// A command's output is shown while it runs: its first line is on stdout
// while the command still waits for the test to let it finish. The
// model's streamed text is shown once.
func TestE2EStreamsCommandOutput(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.srv.Add(
		llmtest.Reply{Text: "Running the slow command now.", ChunkDelay: 5 * time.Millisecond,
			ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{
				"command": fmt.Sprintf(`echo fir""st-line; while [ ! -e %s ]; do sleep 0.05; done; echo sec""ond-line`, gate),
			})}},
		finishReply("done"),
	)
	p := e.start(e.args("slow command")...)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if strings.Contains(strings.Join(p.snapshot(), "\n"), "first-line") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first line was not shown while the command ran; stdout:\n%s", strings.Join(p.snapshot(), "\n"))
		}
		select {
		case <-p.cond:
		case <-time.After(50 * time.Millisecond):
		}
	}
	if strings.Contains(strings.Join(p.snapshot(), "\n"), "second-line") {
		t.Fatal("second-line shown before the command could print it")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.wait(time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, s := range []string{"first-line", "second-line", "Running the slow command now."} {
		if n := strings.Count(r.stdout, s); n != 1 {
			t.Errorf("%q shown %d times, want once:\n%s", s, n, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "System Prompt") {
		t.Errorf("the transcript shows the system prompt")
	}
	// The end-of-run line: status, steps, tokens, cost, time, id.
	last := lastLine(r.stderr)
	for _, s := range []string{"finished", "2 steps", "tokens", "$", e.id} {
		if !strings.Contains(last, s) {
			t.Errorf("end-of-run line %q lacks %q", last, s)
		}
	}
}

// A conversation resumes in its stored workspace, with its stored model,
// from any directory; another --workspace is refused unless
// --move-workspace says so.
func TestE2EResumeInStoredWorkspace(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("first"))
	e.mustRun(0, e.args("first task")...)

	// From elsewhere, without the model variables: the stored ones serve.
	other := t.TempDir()
	e.env = withoutEnv(e.env, "LLM_MODEL", "LLM_BASE_URL")
	e.srv.Add(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_pwd", "terminal", map[string]any{"command": "pwd"})}}, finishReply("second"))
	args := []string{"run", "--persistence-dir", e.data, "--conversation-id", e.id, "--llm-config", e.config, "where are you?"}
	e.cwd = other
	r := e.mustRun(0, args...)
	if !strings.Contains(r.stderr, "continuing conversation "+e.id+" in "+e.work) {
		t.Errorf("stderr does not say it continues in the stored workspace:\n%s", r.stderr)
	}
	reqs := e.srv.Requests()
	if m, _ := reqs[len(reqs)-1].Body["model"].(string); m != "gpt-4o" {
		t.Errorf("resumed with model %q, want the stored gpt-4o", m)
	}
	_, texts := toolResults(t, reqs[len(reqs)-1])
	if len(texts) == 0 || !strings.Contains(texts[len(texts)-1], e.work) {
		t.Errorf("pwd ran in %q, want %s", texts, e.work)
	}

	// An explicit other workspace is refused...
	r = e.mustRun(exitUsage, "run", "--workspace", other, "--persistence-dir", e.data, "--conversation-id", e.id, "--llm-config", e.config, "move?")
	if !strings.Contains(r.stderr, "--move-workspace") || !strings.Contains(r.stderr, e.work) {
		t.Errorf("the refusal does not explain itself:\n%s", r.stderr)
	}
	// ...unless asked for.
	e.srv.Add(finishReply("moved"))
	e.mustRun(0, "run", "--workspace", other, "--move-workspace", "--persistence-dir", e.data, "--conversation-id", e.id, "--llm-config", e.config, "move")

	// A workspace that does not exist is an error, not a new directory.
	missing := filepath.Join(other, "nope")
	r = e.mustRun(exitUsage, "run", "--workspace", missing, "--persistence-dir", e.data, "--llm-config", e.config, "task")
	if !strings.Contains(r.stderr, "no such directory") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("the missing workspace was created")
	}
}

// The errors a newcomer hits fail at once, with a hint, said once.
func TestE2EFailFast(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	closed := closedURL(t)
	// A web server that is not an LLM API.
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()

	for _, tc := range []struct {
		name    string
		baseURL string
		reply   *llmtest.Reply
		want    string
	}{
		{"connection refused", closed, nil, "is the server at --base-url running?"},
		{"not an LLM API", web.URL + "/v1", nil, "check the model name (openai/gpt-4o) and the /v1 path of --base-url"},
		{"bad key", "", &llmtest.Reply{Fail: &llmtest.Failure{Status: 401, Message: "invalid api key"}}, "the key from $LLM_API_KEY was refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			if tc.reply != nil {
				e.srv.Add(*tc.reply)
			}
			e.env = withoutEnv(e.env, "LLM_BASE_URL")
			base := cmpOr(tc.baseURL, e.srv.URL+"/v1")
			// The default retry settings: retried, these would take minutes.
			r := e.mustRun(exitError, "run", "--workspace", e.work, "--persistence-dir", e.data, "--base-url", base, "hello")
			if strings.Contains(r.stderr, "retrying") {
				t.Errorf("retried:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if strings.Contains(r.stderr, "llm: llm:") || strings.Count(r.stderr, "gohands: error:") != 1 {
				t.Errorf("the error says things twice:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, "sk-e2e-test-key") {
				t.Errorf("the key leaked:\n%s", r.stderr)
			}
		})
	}
}

// The providers' own variables give the key when LLM_API_KEY is unset.
func TestE2EProviderKeyVariable(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("ok"))
	e.env = append(withoutEnv(e.env, "LLM_API_KEY"), "OPENAI_API_KEY=sk-from-openai-var")
	e.mustRun(0, e.args("hi")...)
	if got := e.srv.LastRequest().Header.Get("Authorization"); got != "Bearer sk-from-openai-var" {
		t.Errorf("Authorization = %q", got)
	}
	// Without any key, the run stops before calling the model.
	e.env = withoutEnv(e.env, "OPENAI_API_KEY", "LLM_BASE_URL")
	n := len(e.srv.Requests())
	r := e.mustRun(exitUsage, "run", "--workspace", e.work, "--persistence-dir", e.data, "--model", "anthropic/claude-sonnet-4-5", "hi")
	if !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") || len(e.srv.Requests()) != n {
		t.Errorf("missing key: %d requests, stderr:\n%s", len(e.srv.Requests())-n, r.stderr)
	}
}

// The settings file gives the model, the key's variable and the
// confirmation mode; the environment and the flags override it.
func TestE2ESettingsFile(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("ok"))
	settingsFile := filepath.Join(e.home, ".gohands", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settingsFile), 0o700); err != nil {
		t.Fatal(err)
	}
	st := fmt.Sprintf(`{"model": "openai/gpt-4.1", "base_url": %q, "api_key_env": "MY_TEAM_KEY"}`, e.srv.URL+"/v1")
	if err := os.WriteFile(settingsFile, []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	e.env = append(withoutEnv(e.env, "LLM_MODEL", "LLM_API_KEY", "LLM_BASE_URL"), "MY_TEAM_KEY=sk-team")
	e.mustRun(0, e.args("hi")...)
	req := e.srv.LastRequest()
	if m, _ := req.Body["model"].(string); m != "gpt-4.1" || req.Header.Get("Authorization") != "Bearer sk-team" {
		t.Errorf("model %q, auth %q; want the settings'", m, req.Header.Get("Authorization"))
	}
	// The environment beats the file.
	e.id = "6b0f1f1c-4b8e-4d43-9d55-0c1c2f1a9e02"
	e.srv.Add(finishReply("ok"))
	e.env = append(e.env, "LLM_MODEL=openai/gpt-5")
	e.mustRun(0, e.args("hi")...)
	if m, _ := e.srv.LastRequest().Body["model"].(string); m != "gpt-5" {
		t.Errorf("model %q, want the environment's gpt-5", m)
	}
}

// --confirm risky asks about the everyday destructive commands the rules
// know, and about what the model itself rates HIGH.
func TestE2ERiskyCommandsAsked(t *testing.T) {
	t.Parallel()
	cmds := []string{
		"git push --force origin main",
		"git reset --hard && git clean -fdx",
		"rm -rf .git",
		"rm -rf ../other-project",
		`psql -c "DROP DATABASE prod"`,
		"terraform destroy -auto-approve",
		"kubectl delete namespace prod",
		"aws s3 rm s3://bucket --recursive",
		"docker system prune -af --volumes",
		"cat ~/.ssh/id_rsa",
	}
	e := newE2E(t)
	for i, c := range cmds {
		// The model claims each is harmless: the rules still ask.
		e.srv.Add(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call(fmt.Sprintf("call_%d", i), "terminal", map[string]any{"command": c, "security_risk": "LOW"})}})
	}
	// An unknown command the model itself rates HIGH is asked about too.
	e.srv.Add(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_model", "terminal", map[string]any{"command": "./wipe-staging.sh", "security_risk": "HIGH"})}})
	e.srv.Add(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_safe", "terminal", map[string]any{"command": "ls", "security_risk": "LOW"})}})
	e.srv.Add(finishReply("done"))
	e.stdin = strings.Repeat("n\n", len(cmds)+1)
	r := e.mustRun(0, e.args("--confirm", "risky", "clean up")...)
	for _, c := range append(cmds, "./wipe-staging.sh") {
		if !strings.Contains(r.stdout, "Confirm terminal (risk HIGH): "+c+"\n") {
			t.Errorf("not asked about %q", c)
		}
	}
	if n := strings.Count(r.stdout, "Run? [y]es"); n != len(cmds)+1 {
		t.Errorf("%d questions, want %d (ls is not asked about)", n, len(cmds)+1)
	}
	evs, _ := e.events()
	if n := len(ofKind[*event.UserRejectObservation](evs)); n != len(cmds)+1 {
		t.Errorf("%d rejections stored, want %d", n, len(cmds)+1)
	}
}

// "always" approves the rest of the run: the next command is not asked.
func TestE2EConfirmAlwaysAnswer(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	m1, m2 := filepath.Join(e.work, "m1"), filepath.Join(e.work, "m2")
	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "touch " + m1})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c2", "terminal", map[string]any{"command": "touch " + m2})}},
		finishReply("done"),
	)
	e.stdin = "a\n"
	r := e.mustRun(0, e.args("--confirm", "always", "touch both")...)
	if n := strings.Count(r.stdout, "Run? [y]es"); n != 1 {
		t.Errorf("%d questions, want 1:\n%s", n, r.stdout)
	}
	for _, m := range []string{m1, m2} {
		if _, err := os.Stat(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// A long session is condensed by the default agent's summarizing
// condenser instead of growing without bound: the summary reaches the
// model, and the model's view is shorter than the log.
func TestE2ELongSessionCondensed(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	think := func(i int) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call(fmt.Sprintf("t%d", i), "think", map[string]any{"thought": fmt.Sprintf("step %d", i)})}}
	}
	// The view of the system prompt, the task and k think steps (2k
	// events) exceeds the default condenser's max_size at k = max_size/2:
	// the next request is the condenser's.
	c, err := condenser.Decode(preset.DefaultAgent(llm.DefaultConfig("openai/gpt-4o"), nil).Condenser)
	if err != nil {
		t.Fatal(err)
	}
	k := c.(*condenser.LLMSummarizing).MaxSize / 2
	for i := range k {
		e.srv.Add(think(i))
	}
	e.srv.Add(llmtest.Reply{Text: "SUMMARY-OF-EARLY-STEPS"})
	for i := k; i < k+5; i++ {
		e.srv.Add(think(i))
	}
	e.srv.Add(finishReply("done"))
	e.mustRun(0, e.args("--max-iterations", "400", "think a lot")...)
	evs, _ := e.events()
	conds := ofKind[*event.Condensation](evs)
	if len(conds) != 1 || conds[0].Summary == nil || *conds[0].Summary != "SUMMARY-OF-EARLY-STEPS" {
		t.Fatalf("%d condensations in %d events, want one with the scripted summary", len(conds), len(evs))
	}
	reqs := e.srv.Requests()
	if tools, ok := reqs[k].Body["tools"]; ok && tools != nil {
		t.Errorf("request %d offers tools: not the condenser's summary request", k)
	}
	last := reqs[len(reqs)-1]
	msgs, _ := last.Body["messages"].([]any)
	forgot := len(conds[0].ForgottenEventIDs)
	if forgot < k/2 || len(msgs) > len(evs)-forgot {
		t.Errorf("the last request has %d messages for %d events, %d forgotten: not condensed", len(msgs), len(evs), forgot)
	}
	if !strings.Contains(string(last.RawBody), "SUMMARY-OF-EARLY-STEPS") {
		t.Error("the summary does not reach the model")
	}
}

// TestE2EContextFilesReachModel: gohands run's default agent sends the
// workspace's AGENTS.md, its CLAUDE.md (read by every model, unlike the
// reference: issue 32 item 9), a project skill and a user skill to the
// model.
func TestE2EContextFilesReachModel(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("ok"))
	files := map[string]string{
		filepath.Join(e.work, "AGENTS.md"): "Run make lint before finishing (agents-md-marker).\n",
		filepath.Join(e.work, "CLAUDE.md"): "Tabs, not spaces (claude-md-marker).\n",
		filepath.Join(e.work, ".openhands", "skills", "deploy", "SKILL.md"): "---\nname: deploy\n" +
			"description: How to deploy this service (project-skill-marker).\n---\nRun ./deploy.sh.\n",
		filepath.Join(e.home, ".openhands", "skills", "style", "SKILL.md"): "---\nname: style\n" +
			"description: The user's code style (user-skill-marker).\n---\nPrefer short functions.\n",
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.mustRun(0, e.args("hi")...)
	body := string(e.srv.Requests()[0].RawBody)
	for _, marker := range []string{"agents-md-marker", "claude-md-marker", "project-skill-marker", "user-skill-marker"} {
		if !strings.Contains(body, marker) {
			t.Errorf("the model's first request lacks %s", marker)
		}
	}
}
