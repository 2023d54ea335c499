package pyclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/llm/llmtest"
)

// runFlagCase is one `gohands run --server` invocation of
// TestRunServerFlags158.
type runFlagCase struct {
	name string
	// args come after the common ones (--server, --workspace, the model);
	// the task is the last. noModel leaves out --model, --base-url and
	// --api-key, noKey --session-key.
	args           []string
	noModel, noKey bool
	stdin          string
	env            []string
	code           int      // the exit status
	want           []string // regular expressions the output must match
	dontWant       []string // ... and must not
	// server, if set, checks the conversation as the server returns it
	// (GET /api/conversations/{id}).
	server func(t *testing.T, info map[string]any)
}

// startedID finds the conversation id in a run's output.
var startedID = regexp.MustCompile(`starting conversation ([0-9a-f-]{36})`)

// TestRunServerFlags158 runs `gohands run --server` against a real
// reference 1.58.2 agent server (one for all cases) on a scripted model
// (testdata/runflags_playbook.json), with every flag of `gohands run`:
// each either works on the reference's server, checked in the output
// and in the conversation the server holds, or is refused as a usage
// error that says why (exit status 2) before anything is sent.
func TestRunServerFlags158(t *testing.T) {
	t.Parallel()
	bin := gohandsBinary(t)
	p, err := llmtest.ReadPlaybook(filepath.Join("testdata", "runflags_playbook.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := llmtest.NewResponder(t, p.Respond, nil)
	modelURL := strings.TrimRight(m.URL, "/") + "/v1"
	ref := sharedReference158(t)

	dir := t.TempDir()
	llmConfig := filepath.Join(dir, "llm.json")
	writeJSON(t, llmConfig, map[string]any{"model": "openai/gpt-4o", "base_url": modelURL, "api_key": "scripted", "num_retries": 2})
	mcpConfig := filepath.Join(dir, "mcp.json")
	writeJSON(t, mcpConfig, map[string]any{"mcpServers": map[string]any{"x": map[string]any{"command": "true"}}})
	settingsHome := filepath.Join(dir, "profile-home")
	writeJSON(t, filepath.Join(settingsHome, ".gohands", "settings.json"), map[string]any{
		"llm_profiles": map[string]any{"scripted": map[string]any{"model": "openai/gpt-4o", "base_url": modelURL, "api_key": "scripted"}},
	})
	traceFile := filepath.Join(dir, "trace.json")
	llm := func(info map[string]any) map[string]any {
		a, _ := info["agent"].(map[string]any)
		l, _ := a["llm"].(map[string]any)
		return l
	}
	toolsOf := func(info map[string]any) []string {
		a, _ := info["agent"].(map[string]any)
		var names []string
		for _, tl := range a["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		slices.Sort(names)
		return names
	}
	wantTools := func(want ...string) func(*testing.T, map[string]any) {
		return func(t *testing.T, info map[string]any) {
			if got := toolsOf(info); !slices.Equal(got, want) {
				t.Errorf("the server's agent has tools %v, want %v", got, want)
			}
		}
	}
	usage := func(name string, args []string, why string) runFlagCase {
		return runFlagCase{name: name, args: append(args, "#text"), code: 2, want: []string{regexp.QuoteMeta(why)}}
	}

	cases := []runFlagCase{
		{name: "server,session-key,workspace,model,base-url,api-key", args: []string{"#echo"},
			want: []string{`(?m)^hello-from-run$`, `finished · 2 steps`}},
		{name: "$SESSION_API_KEY", noKey: true, env: []string{"SESSION_API_KEY=" + apiKey}, args: []string{"#text"},
			want: []string{`Just text\.`}},
		{name: "llm-config", noModel: true, args: []string{"--llm-config", llmConfig, "#text"},
			want: []string{`Just text\.`},
			server: func(t *testing.T, info map[string]any) {
				if l := llm(info); l["num_retries"] != 2.0 || l["base_url"] != modelURL {
					t.Errorf("the server's llm: %v", l)
				}
			}},
		{name: "profile", noModel: true, env: []string{"HOME=" + settingsHome}, args: []string{"--profile", "scripted", "#text"},
			want: []string{`Just text\.`},
			server: func(t *testing.T, info map[string]any) {
				if l := llm(info); l["usage_id"] != "profile:scripted" {
					t.Errorf("the server's llm: %v", l)
				}
			}},
		{name: "retries,retry-max-wait", args: []string{"--retries", "1", "--retry-max-wait", "3s", "#text"},
			want: []string{`Just text\.`},
			server: func(t *testing.T, info map[string]any) {
				if l := llm(info); l["num_retries"] != 1.0 || l["retry_max_wait"] != 3.0 {
					t.Errorf("the server's llm: num_retries %v retry_max_wait %v", l["num_retries"], l["retry_max_wait"])
				}
			}},
		{name: "json", args: []string{"--json", "#echo"}, want: []string{`"kind": ?"ObservationEvent"`, `hello-from-run`}},
		{name: "task from stdin", stdin: "#echo from stdin\n", args: []string{"-"}, want: []string{`(?m)^hello-from-run$`}},
		{name: "secret", args: []string{"--secret", "RUN_TOKEN=tok-9d8e7f", "#secret"},
			want: []string{`token=`}, dontWant: []string{`tok-9d8e7f`}},
		{name: "confirm never refuses HIGH", args: []string{"--confirm", "never", "#high"}, code: 6,
			want: []string{`refused terminal`}, dontWant: []string{`(?m)^risky-ran$`}},
		{name: "allow-high-risk", args: []string{"--allow-high-risk", "#high"}, want: []string{`(?m)^risky-ran$`}},
		// The answer's echo ends the question's line: the command's
		// output follows it there.
		{name: "confirm always", stdin: "y\n", args: []string{"--confirm", "always", "#echo"},
			want: []string{`Confirm terminal`, `hello-from-run\n\[exit code 0\]`}},
		{name: "confirm risky", stdin: "y\n", args: []string{"--confirm", "risky", "#high"},
			want: []string{`Confirm terminal \(risk HIGH\)`, `risky-ran\n\[exit code 0\]`}},
		{name: "max-iterations", args: []string{"--max-iterations", "1", "#echo"}, code: 4, want: []string{`MaxIterationsReached`}},
		{name: "goal", args: []string{"--goal", "2", "#text"}, want: []string{`goal complete after 1 judged run`}},
		{name: "preset default", args: []string{"--preset", "default", "#text"}, want: []string{`Just text\.`},
			server: wantTools("file_editor", "task_tool_set", "task_tracker", "terminal")},
		{name: "preset gpt5", args: []string{"--preset", "gpt5", "#text"}, want: []string{`Just text\.`},
			server: wantTools("apply_patch", "task_tool_set", "task_tracker", "terminal")},
		{name: "preset gemini", args: []string{"--preset", "gemini", "#text"}, want: []string{`Just text\.`},
			server: wantTools("edit", "list_directory", "read_file", "task_tool_set", "task_tracker", "terminal", "write_file")},
		{name: "preset planning", args: []string{"--preset", "planning", "#text"}, want: []string{`Just text\.`},
			server: wantTools("glob", "grep", "planning_file_editor")},
		{name: "browser", args: []string{"--browser", "#text"}, want: []string{`Just text\.`},
			server: func(t *testing.T, info map[string]any) {
				if !slices.Contains(toolsOf(info), "browser_tool_set") {
					t.Errorf("the server's agent has no browser: %v", toolsOf(info))
				}
			}},
		{name: "acp", args: []string{"--acp", fmt.Sprintf("env LLM_MODEL=openai/gpt-4o LLM_BASE_URL=%s LLM_API_KEY=scripted HOME=%s %s acp", modelURL, dir, bin), "#text"},
			want: []string{`Just text\.`},
			server: func(t *testing.T, info map[string]any) {
				if a, _ := info["agent"].(map[string]any); a["kind"] != "ACPAgent" {
					t.Errorf("the server's agent is a %v", a["kind"])
				}
			}},
		{name: "verbose", args: []string{"-v", "#text"}, want: []string{`Just text\.`}},
		{name: "trace", args: []string{"--trace", traceFile, "#text"}, want: []string{`Just text\.`}},
		{name: "persistence-dir", args: []string{"--persistence-dir", filepath.Join(dir, "store"), "#text"}, want: []string{`Just text\.`}},
		usage("continue", []string{"-c"}, "with --server, give --conversation-id"),
		usage("max-budget", []string{"--max-budget", "1"}, "--max-budget cannot be used with --server"),
		usage("move-workspace", []string{"--move-workspace"}, "--move-workspace cannot be used with --server"),
		usage("mcp-config", []string{"--mcp-config", mcpConfig}, "MCP servers cannot be used with --server"),
		usage("sandbox", []string{"--sandbox", "docker"}, "--server and --sandbox cannot be used together"),
		usage("image", []string{"--image", "gohands:latest"}, "--image is the image of --sandbox docker"),
	}
	id := uuid.NewString()
	run := func(t *testing.T, c runFlagCase) string {
		work := t.TempDir()
		args := []string{"run", "--server", ref.URL, "--workspace", work}
		if !c.noKey {
			args = append(args, "--session-key", apiKey)
		}
		if !c.noModel {
			args = append(args, "--model", "openai/gpt-4o", "--base-url", modelURL, "--api-key", "scripted")
		}
		cmd := exec.Command(bin, append(args, c.args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "SESSION_API_KEY=", "LLM_MODEL=", "LLM_API_KEY=", "LLM_BASE_URL=")
		cmd.Env = append(cmd.Env, c.env...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.WaitDelay = 10 * time.Second
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("exit status %d, want %d", code, c.code)
		}
		for _, w := range c.want {
			if !regexp.MustCompile(w).Match(out.Bytes()) {
				t.Errorf("the output lacks %q", w)
			}
		}
		for _, w := range c.dontWant {
			if regexp.MustCompile(w).Match(out.Bytes()) {
				t.Errorf("the output has %q", w)
			}
		}
		if c.server != nil {
			if m := startedID.FindSubmatch(out.Bytes()); m == nil {
				t.Errorf("no conversation id in the output")
			} else {
				c.server(t, conversationInfo(t, ref.URL, string(m[1])))
			}
		}
		if t.Failed() {
			t.Logf("gohands %s:\n%s", strings.Join(cmd.Args[1:], " "), tail(out.Bytes(), 6000))
		}
		return out.String()
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run(t, c)
			if c.name == "trace" {
				// The client's run span; the steps are the server's.
				if b, err := os.ReadFile(traceFile); err != nil || !bytes.Contains(b, []byte(`"conversation.run"`)) {
					t.Errorf("--trace wrote no spans (%v): %.300s", err, b)
				}
			}
		})
	}
	// A conversation started with --conversation-id and continued with it.
	t.Run("conversation-id", func(t *testing.T) {
		t.Parallel()
		run(t, runFlagCase{args: []string{"--conversation-id", id, "#echo"}, want: []string{`(?m)^hello-from-run$`, regexp.QuoteMeta(id)}})
		run(t, runFlagCase{args: []string{"--conversation-id", id, "#more please"}, want: []string{`(?m)^more-from-run$`}})
		if n := len(conversationInfo(t, ref.URL, id)); n == 0 {
			t.Errorf("the server has no conversation %s", id)
		}
	})
}

// conversationInfo returns GET /api/conversations/{id} of the server.
func conversationInfo(t *testing.T, url, id string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/api/conversations/"+id, nil)
	req.Header.Set("X-Session-API-Key", apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET conversation %s: %d %v", id, resp.StatusCode, err)
	}
	return info
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
