//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// TestE2ECredentialsNotReadable: the agent's commands run under gohands
// and can read its /proc files. The model's key (from the environment or
// --api-key) and the secrets given on the command line are not in them,
// not even reversed (which masking would not catch).
func TestE2ECredentialsNotReadable(t *testing.T) {
	const envKey = "sk-envkey-0a1b2c3d4e5f6071"
	const flagKey = "sk-flagkey-9z8y7x6w5v4u"
	const flagSecret = "pw-cmdline-5e6f7a8b9c"
	const envSecret = "tok-environ-1f2e3d4c5b"
	cmd := `{ cat /proc/$PPID/environ; echo; cat /proc/$PPID/cmdline; echo; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; echo; done; } 2>/dev/null | tr '\0' '\n' | rev | grep -c . ; ` +
		`{ cat /proc/$PPID/environ /proc/$PPID/cmdline; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; done; } 2>/dev/null | tr '\0' '\n' | rev > ` + "dump.txt"
	for _, viaFlag := range []bool{false, true} {
		t.Run(map[bool]string{false: "env", true: "flag"}[viaFlag], func(t *testing.T) {
			e := newE2E(t,
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "terminal", map[string]any{"command": cmd})}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_2", "terminal", map[string]any{"command": "echo $LLM_API_KEY; cat dump.txt | rev | grep -c LLM_MODEL"})}},
				finishReply("done"),
			)
			var env []string
			for _, kv := range e.env {
				if !strings.HasPrefix(kv, "LLM_API_KEY=") {
					env = append(env, kv)
				}
			}
			e.env = append(env, "LLM_API_KEY="+envKey, "DEPLOY_TOKEN="+envSecret)
			extra := []string{"--secret", "API_PASSWORD=" + flagSecret, "--secret", "DEPLOY_TOKEN"}
			key := envKey
			if viaFlag {
				extra = append(extra, "--api-key", flagKey)
				key = flagKey
			}
			r := e.mustRun(0, e.args(append(extra, "read the credentials")...)...)
			dump, err := os.ReadFile(filepath.Join(e.work, "dump.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(reverse(string(dump)), "LLM_MODEL=openai/gpt-4o") {
				t.Fatalf("the dump did not read gohands' environment:\n%.2000s", dump)
			}
			var texts []string
			texts = append(texts, string(dump), r.stdout, r.stderr)
			for _, req := range e.srv.Requests() {
				texts = append(texts, string(req.RawBody))
			}
			filepath.WalkDir(e.data, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(path)
					texts = append(texts, string(b))
				}
				return nil
			})
			for i, s := range texts {
				for _, v := range []string{key, envKey, flagSecret, envSecret} {
					if strings.Contains(s, v) || strings.Contains(s, reverse(v)) {
						t.Errorf("text %d holds %q (or reversed):\n%.3000s", i, v, s)
					}
				}
			}
			if len(e.srv.Requests()) < 3 {
				t.Fatalf("%d model requests", len(e.srv.Requests()))
			}
		})
	}
}

// TestE2EModelTextStripped: escape sequences in everything the model
// writes (text, reasoning, thought, tool names, arguments, the finish
// message) and in a command's output never reach the terminal.
func TestE2EModelTextStripped(t *testing.T) {
	const evil = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b[8mhidden\x1b[0m\x9b31m\r"
	for _, mode := range [][]string{nil, {"--json"}} {
		e := newE2E(t,
			llmtest.Reply{Text: "text" + evil, Reasoning: "reason" + evil, ToolCalls: []llmtest.ToolCall{
				call("c1", "terminal", map[string]any{"command": "printf 'out\\033]52;c;eA==\\007\\n'", "thought": "th" + evil}),
				call("c2", "no_such_tool"+evil, map[string]any{"x": evil}),
			}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c3", "terminal", `{"command": "echo`+strings.ReplaceAll(fmt.Sprintf("%q", evil), `"`, ``)+`"`)}},
			finishReply("bye"+evil),
		)
		r := e.run(append(e.args(mode...), "go"+evil)...)
		ls := e.run("ls", "--persistence-dir", e.data)
		r.stderr += ls.stdout + ls.stderr
		if r.code != 0 || !strings.Contains(r.stdout, "bye") || !strings.Contains(r.stdout, "hidden") {
			t.Errorf("%v: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
		}
		for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			for i, c := range s {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c < 0xa0 {
					t.Errorf("%v %s: control character %q at %d: %q", mode, name, c, i, s[max(0, i-40):min(len(s), i+40)])
					break
				}
			}
		}
	}
}
