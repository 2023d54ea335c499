package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// inProcess runs the command line in this process with the given
// environment.
func inProcess(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv:   func(k string) string { return env[k] },
		unsetenv: func(k string) error { delete(env, k); return nil },
		exit:     func(code int) { t.Fatalf("exit(%d) called", code) },
	}
	code = a.main(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestNoModel(t *testing.T) {
	t.Parallel()
	code, _, stderr := inProcess(t, map[string]string{"HOME": t.TempDir()}, "run", "fix the bug")
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{"no model configured", "--model", "LLM_MODEL", "LLM_API_KEY", "LLM_BASE_URL"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the message lacks %q:\n%s", want, stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	env := func() map[string]string {
		return map[string]string{"HOME": t.TempDir(), "LLM_MODEL": "openai/gpt-4o"}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no task", []string{"run"}, "no task given"},
		{"bad id", []string{"run", "--conversation-id", "nope", "task"}, "not a conversation id"},
		{"unknown id without task", []string{"run", "--conversation-id", "6b0f1f1c-4b8e-4d43-9d55-0c1c2f1a9e01"}, "no conversation 6b0f1f1c-4b8e-4d43-9d55-0c1c2f1a9e01"},
		{"negative iterations", []string{"run", "--max-iterations", "-1", "task"}, "must not be negative"},
		{"secret name", []string{"run", "--secret", "BAD-NAME=x", "task"}, "environment variable name"},
		{"secret unset", []string{"run", "--secret", "UNSET_SECRET", "task"}, "$UNSET_SECRET is not set"},
		{"secret empty", []string{"run", "--secret", "EMPTY=", "task"}, "empty value"},
		{"unknown flag", []string{"run", "--frobnicate", "task"}, "unknown flag"},
		{"unknown command", []string{"fly"}, "unknown command"},
		{"bad provider", []string{"run", "--model", "nosuch/model", "task"}, "nosuch/model"},
		{"missing config", []string{"run", "--llm-config", "/nonexistent/llm.json", "task"}, "--llm-config"},
		{"ls args", []string{"ls", "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := inProcess(t, env(), tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 1 && tc.name != "unknown flag" && tc.name != "unknown command" && tc.name != "ls args" {
				t.Errorf("the reason takes %d lines, want one:\n%s", n+1, stderr)
			}
		})
	}
}

func TestLLMConfigPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "llm.json")
	writeFile(t, file, `{"model": "from-file", "base_url": "http://file", "api_key": "file-key", "num_retries": 2}`)
	a := &app{getenv: func(k string) string {
		return map[string]string{"LLM_MODEL": "from-env", "LLM_API_KEY": "env-key"}[k]
	}}
	cfg, source, err := a.llmConfig(&runFlags{llmConfig: file, model: "from-flag"}, settings{}, convInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "from-flag" || cfg.BaseURL != "http://file" || cfg.APIKey.Value() != "env-key" || cfg.NumRetries != 2 || source != "$LLM_API_KEY" {
		t.Errorf("config = model %q base %q key %q (%s) retries %d", cfg.Model, cfg.BaseURL, cfg.APIKey.Value(), source, cfg.NumRetries)
	}
	// Absent keys keep the reference's defaults.
	if cfg.RetryMaxWait != 64 || !cfg.NativeToolCalling {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

// Flags beat the environment, which beats the settings file; a resumed
// conversation keeps its model and base URL; the providers' own key
// variables count when LLM_API_KEY is unset.
func TestSettingsPrecedence(t *testing.T) {
	t.Parallel()
	st := settings{Model: "anthropic/claude-sonnet-4-5", BaseURL: "http://settings", APIKeyEnv: "MY_KEY", Confirm: "risky"}
	for _, tc := range []struct {
		name       string
		env        map[string]string
		flags      runFlags
		stored     convInfo
		wantModel  string
		wantBase   string
		wantKey    string
		wantSource string
	}{
		{"settings only", map[string]string{"MY_KEY": "k-named"}, runFlags{}, convInfo{},
			"anthropic/claude-sonnet-4-5", "http://settings", "k-named", "$MY_KEY (named by the settings file)"},
		{"provider variable beats the settings", map[string]string{"MY_KEY": "k-named", "ANTHROPIC_API_KEY": "k-ant"}, runFlags{}, convInfo{},
			"anthropic/claude-sonnet-4-5", "http://settings", "k-ant", "$ANTHROPIC_API_KEY"},
		{"LLM_API_KEY beats the provider variable", map[string]string{"ANTHROPIC_API_KEY": "k-ant", "LLM_API_KEY": "k-llm"}, runFlags{}, convInfo{},
			"anthropic/claude-sonnet-4-5", "http://settings", "k-llm", "$LLM_API_KEY"},
		{"environment beats the settings", map[string]string{"LLM_MODEL": "openai/gpt-5", "LLM_BASE_URL": "http://env", "OPENAI_API_KEY": "k-oai"}, runFlags{}, convInfo{},
			"openai/gpt-5", "http://env", "k-oai", "$OPENAI_API_KEY"},
		{"flags beat the environment", map[string]string{"LLM_MODEL": "openai/gpt-5", "LLM_API_KEY": "k-llm"}, runFlags{model: "gemini/gemini-2.5-pro", apiKey: "k-flag", baseURL: "http://flag"}, convInfo{},
			"gemini/gemini-2.5-pro", "http://flag", "k-flag", "--api-key"},
		{"a resumed conversation keeps its model", map[string]string{"LLM_MODEL": "openai/gpt-5", "GEMINI_API_KEY": "k-gem"}, runFlags{}, convInfo{Model: "gemini/gemini-2.5-flash", BaseURL: ""},
			"gemini/gemini-2.5-flash", "", "k-gem", "$GEMINI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{getenv: func(k string) string { return tc.env[k] }}
			cfg, source, err := a.llmConfig(&tc.flags, st, tc.stored)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Model != tc.wantModel || cfg.BaseURL != tc.wantBase || cfg.APIKey.Value() != tc.wantKey || source != tc.wantSource {
				t.Errorf("got model %q base %q key %q from %q; want %q %q %q from %q",
					cfg.Model, cfg.BaseURL, cfg.APIKey.Value(), source, tc.wantModel, tc.wantBase, tc.wantKey, tc.wantSource)
			}
		})
	}
}

// A hosted model without any key is reported before the first call, with
// the variables that would do.
func TestMissingKey(t *testing.T) {
	t.Parallel()
	a := &app{getenv: func(string) string { return "" }}
	_, _, err := a.llmConfig(&runFlags{model: "anthropic/claude-sonnet-4-5"}, settings{}, convInfo{})
	if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") || !strings.Contains(err.Error(), "LLM_API_KEY") {
		t.Errorf("err = %v", err)
	}
	// A server of one's own may need no key.
	if _, _, err := a.llmConfig(&runFlags{model: "openai/qwen", baseURL: "http://127.0.0.1:8000/v1"}, settings{}, convInfo{}); err != nil {
		t.Errorf("with --base-url: %v", err)
	}
	// Bedrock signs with AWS credentials.
	if _, _, err := a.llmConfig(&runFlags{model: "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"}, settings{}, convInfo{}); err != nil {
		t.Errorf("bedrock: %v", err)
	}
}

func TestDefaultPersistenceDir(t *testing.T) {
	t.Parallel()
	a := &app{getenv: func(k string) string {
		return map[string]string{"XDG_DATA_HOME": "/data", "HOME": "/home/u"}[k]
	}}
	if d, _ := a.defaultPersistenceDir(); d != "/data/gohands/conversations" {
		t.Errorf("with XDG_DATA_HOME: %s", d)
	}
	// A relative XDG_DATA_HOME is invalid by the XDG spec and ignored.
	a.getenv = func(k string) string { return map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/home/u"}[k] }
	if d, _ := a.defaultPersistenceDir(); d != "/home/u/.local/share/gohands/conversations" && !strings.HasSuffix(d, "gohands/conversations") {
		t.Errorf("without XDG_DATA_HOME: %s", d)
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	if got := oneLine("first\nsecond"); got != "first …" {
		t.Errorf("oneLine = %q", got)
	}
	if got := clip("a  b\nc", 10); got != "a b c" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("abcdefghijkl", 5); got != "abcd…" {
		t.Errorf("clip = %q", got)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The first interrupt pauses; a second one quits at once.
func TestSecondInterruptQuits(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChat(t, llmtest.Reply{Delay: 10 * time.Second, Text: "too late"})
	sig := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var out, errb syncBuffer
	a := &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv:   env{"LLM_MODEL": "openai/gpt-4o", "LLM_BASE_URL": srv.URL + "/v1", "LLM_API_KEY": "k"}.get,
		unsetenv: func(string) error { return nil },
		signals:  sig,
		exit:     func(code int) { exited <- code },
	}
	done := make(chan int, 1)
	go func() {
		done <- a.main(context.Background(), []string{"run", "--persistence-dir", t.TempDir(), "--workspace", t.TempDir(), "wait"})
	}()
	// Wait until the model is being asked, then interrupt twice.
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	sig <- os.Interrupt
	sig <- os.Interrupt
	select {
	case code := <-exited:
		if code != exitPaused {
			t.Errorf("exit(%d), want %d", code, exitPaused)
		}
	case code := <-done:
		// The pause won the race with the second interrupt.
		t.Log("the run ended before the second interrupt was handled")
		if code != exitPaused {
			t.Errorf("exit status %d, want %d", code, exitPaused)
		}
		return
	case <-time.After(30 * time.Second):
		t.Fatal("the second interrupt did not end the program")
	}
	if !strings.Contains(errb.String(), "quitting") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	<-done
}

type env map[string]string

func (e env) get(k string) string { return e[k] }

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := inProcess(t, map[string]string{"HOME": t.TempDir()}, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "gohands version ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	code, stdout, _ = inProcess(t, map[string]string{"HOME": t.TempDir()}, "--help")
	if code != 0 || !strings.Contains(stdout, "completion") {
		t.Errorf("--help does not list completion:\n%s", stdout)
	}
	code, stdout, _ = inProcess(t, map[string]string{"HOME": t.TempDir()}, "completion", "bash")
	if code != 0 || !strings.Contains(stdout, "__start_gohands") {
		t.Errorf("completion bash: exit %d", code)
	}
}

// gohands mcp edits the settings file's MCP servers.
func TestMCPCommands(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	for _, args := range [][]string{
		{"mcp", "add", "fetch", "--", "uvx", "mcp-server-fetch"},
		{"mcp", "add", "docs", "--url", "http://127.0.0.1:8931/mcp"},
		{"mcp", "disable", "docs"},
	} {
		if code, _, stderr := inProcess(t, env, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	_, out, _ := inProcess(t, env, "mcp", "list")
	for _, want := range []string{"fetch  enabled   uvx mcp-server-fetch", "docs   disabled  http://127.0.0.1:8931/mcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(home, ".gohands", "settings.json"))
	if err != nil || !strings.Contains(string(data), `"mcpServers"`) {
		t.Fatalf("settings file: %v\n%s", err, data)
	}
	inProcess(t, env, "mcp", "enable", "docs")
	inProcess(t, env, "mcp", "remove", "fetch")
	_, out, _ = inProcess(t, env, "mcp", "list")
	if strings.Contains(out, "fetch") || !strings.Contains(out, "docs  enabled") {
		t.Errorf("after enable and remove:\n%s", out)
	}
	if code, _, stderr := inProcess(t, env, "mcp", "remove", "nosuch"); code != exitUsage || !strings.Contains(stderr, "nosuch") {
		t.Errorf("remove of a missing server: exit %d %s", code, stderr)
	}
}
