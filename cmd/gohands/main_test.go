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
	dir := t.TempDir()
	file := filepath.Join(dir, "llm.json")
	writeFile(t, file, `{"model": "from-file", "base_url": "http://file", "api_key": "file-key", "num_retries": 2}`)
	a := &app{getenv: func(k string) string {
		return map[string]string{"LLM_MODEL": "from-env", "LLM_API_KEY": "env-key"}[k]
	}}
	cfg, err := a.llmConfig(&runFlags{llmConfig: file, model: "from-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "from-flag" || cfg.BaseURL != "http://file" || cfg.APIKey.Value() != "env-key" || cfg.NumRetries != 2 {
		t.Errorf("config = model %q base %q key %q retries %d", cfg.Model, cfg.BaseURL, cfg.APIKey.Value(), cfg.NumRetries)
	}
	// Absent keys keep the reference's defaults.
	if cfg.RetryMaxWait != 64 || !cfg.NativeToolCalling {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

func TestDefaultPersistenceDir(t *testing.T) {
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
