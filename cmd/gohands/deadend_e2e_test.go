package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/eval"
	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/llm/llmtest"
)

// closedURL is the base URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

// gohands eval against a model address where nothing listens fails each
// task at once, saying why, instead of retrying each for two minutes (the
// default retries: 5 attempts, 8 to 64 s apart; 8 min 11 s for the
// starter suite before).
func TestE2EEvalDeadEndpoint(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	out := filepath.Join(t.TempDir(), "results")
	start := time.Now()
	// Default retry settings: no --llm-config.
	r := e.mustRun(0, "eval", "--base-url", closedURL(t), "--out", out)
	t.Logf("the starter suite against a dead endpoint ended in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(r.stderr, "retrying") {
		t.Errorf("retried:\n%s", r.stderr)
	}
	s, err := eval.Summarize(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 4 {
		t.Fatalf("%d results, want the 4 starter tasks", len(s.Results))
	}
	for _, res := range s.Results {
		if res.Outcome != eval.OutcomeAgentError || !strings.Contains(res.Reason, "nothing listens at the model's address") {
			t.Errorf("%s: %s: %s; want an agent error that says nothing listens", res.Task, res.Outcome, res.Reason)
		}
	}
	if !strings.Contains(r.stderr, "nothing listens at the model's address") {
		t.Errorf("the progress lines do not say why the tasks failed:\n%s", r.stderr)
	}
}

// gohands acp answers a prompt at once with an error that says nothing
// listens at the model's address (it took 125 s before).
func TestE2EACPDeadEndpoint(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	start := time.Now()
	rerr, _ := acpPrompt(t, e, "--base-url", closedURL(t))
	t.Logf("the prompt was answered in %s: %s", time.Since(start).Round(time.Millisecond), rerr)
	if !strings.Contains(string(rerr), "nothing listens at the model") {
		t.Errorf("session/prompt error %s; want one that says nothing listens at the model's address", rerr)
	}
	if strings.Contains(string(rerr), "sk-e2e-test-key") {
		t.Errorf("the key leaked: %s", rerr)
	}
}

// acpPrompt runs gohands acp with args as an ACP client would: initialize,
// session/new, one prompt; it returns the prompt's JSON-RPC error, if any,
// and what gohands wrote on standard error.
func acpPrompt(t *testing.T, e *e2e, args ...string) (rpcErr json.RawMessage, stderrText string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"acp", "--persistence-dir", e.data}, args...)...)
	cmd.Env = e.env
	cmd.Dir = e.work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The hang guard: the default retries would take two minutes.
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()

	replies := bufio.NewScanner(outPipe)
	replies.Buffer(nil, 1<<20)
	id := 0
	// call sends a request and returns its response, skipping
	// notifications.
	call := func(method string, params any) (result json.RawMessage, rpcErr json.RawMessage) {
		t.Helper()
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := fmt.Fprintf(in, "%s\n", b); err != nil {
			t.Fatal(err)
		}
		for replies.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
				t.Fatalf("%s: %v", replies.Bytes(), err)
			}
			if m.ID != nil && *m.ID == id {
				return m.Result, m.Error
			}
		}
		t.Fatalf("gohands acp ended during %s: %v\n%s", method, replies.Err(), stderr.String())
		return nil, nil
	}
	if _, rerr := call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); rerr != nil {
		t.Fatalf("initialize: %s", rerr)
	}
	res, rerr := call("session/new", map[string]any{"cwd": e.work, "mcpServers": []any{}})
	if rerr != nil {
		t.Fatalf("session/new: %s", rerr)
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &sess)
	_, rpcErr = call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hello"}}})
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("gohands acp: %v\n%s", err, stderr.String())
	}
	return rpcErr, stderr.String()
}

// The retries of a failing model (HTTP 500 here) are shown as they happen
// and bounded from the command line (--retries, --retry-max-wait) and the
// settings file (num_retries, retry_max_wait), for run and eval; without
// them the defaults (5 attempts, 8 to 64 s apart) take two minutes.
func TestE2ERetryBounds(t *testing.T) {
	t.Parallel()
	fail := func(e *e2e, n int) {
		for range n {
			e.srv.Add(llmtest.Fail(500, "overloaded"))
		}
	}

	t.Run("run flags", func(t *testing.T) {
		e := newE2E(t)
		fail(e, 5)
		r := e.mustRun(exitError, "run", "--workspace", e.work, "--persistence-dir", e.data, "--retries", "2", "--retry-max-wait", "10ms", "hello")
		if n := len(e.srv.Requests()); n != 2 {
			t.Errorf("%d model calls, want 2", n)
		}
		if !strings.Contains(r.stderr, "(attempt 1 of 2), retrying in 10ms") || strings.Contains(r.stderr, "attempt 2 of 2") {
			t.Errorf("stderr does not show the one retry:\n%s", r.stderr)
		}
	})

	t.Run("settings", func(t *testing.T) {
		e := newE2E(t)
		fail(e, 5)
		os.MkdirAll(filepath.Join(e.home, ".gohands"), 0o755)
		os.WriteFile(filepath.Join(e.home, ".gohands", "settings.json"), []byte(`{"num_retries": 3, "retry_max_wait": 0.01}`), 0o600)
		r := e.mustRun(exitError, "run", "--workspace", e.work, "--persistence-dir", e.data, "hello")
		if n := len(e.srv.Requests()); n != 3 {
			t.Errorf("%d model calls, want 3:\n%s", n, r.stderr)
		}
		// A flag beats the settings.
		e.mustRun(exitError, "run", "--workspace", e.work, "--persistence-dir", e.data, "--retries", "1", "hello")
		if n := len(e.srv.Requests()); n != 4 {
			t.Errorf("%d model calls, want 4 (one more)", n)
		}
		e.mustRun(exitUsage, "run", "--workspace", e.work, "--retries", "-1", "hello")
	})

	t.Run("eval", func(t *testing.T) {
		e := newE2E(t)
		fail(e, 5)
		suite := evalSuite(t, "a")
		out := filepath.Join(t.TempDir(), "results")
		r := e.mustRun(0, "eval", "--retries", "2", "--retry-max-wait", "10ms", "--out", out, suite)
		if n := len(e.srv.Requests()); n != 2 {
			t.Errorf("%d model calls, want 2:\n%s", n, r.stderr)
		}
		if !strings.Contains(r.stderr, "retrying") {
			t.Errorf("stderr does not show the retry:\n%s", r.stderr)
		}

		// The same bounds apply to each configuration of --agents.
		fail(e, 5)
		agents := filepath.Join(t.TempDir(), "agents.json")
		os.WriteFile(agents, []byte(`[{"name": "one", "model": "openai/gpt-4o", "base_url": "`+e.srv.URL+`/v1"}]`), 0o644)
		e.mustRun(0, "eval", "--agents", agents, "--retries", "3", "--retry-max-wait", "10ms", "--out", out, suite)
		if n := len(e.srv.Requests()); n != 5 {
			t.Errorf("%d model calls, want 5 (3 more)", n)
		}
	})

	t.Run("acp", func(t *testing.T) {
		e := newE2E(t)
		fail(e, 5)
		rerr, stderr := acpPrompt(t, e, "--retries", "2", "--retry-max-wait", "10ms")
		if n := len(e.srv.Requests()); n != 2 {
			t.Errorf("%d model calls, want 2", n)
		}
		// Shown without -v: standard error is the editor's log of the agent.
		if !strings.Contains(stderr, "(attempt 1 of 2), retrying in 10ms") {
			t.Errorf("stderr does not show the retry:\n%s", stderr)
		}
		if !strings.Contains(string(rerr), "overloaded") {
			t.Errorf("session/prompt error %s, want the provider's", rerr)
		}
	})
}
