package pyclient_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestOpenHandsApp runs the OpenHands app server (openhands-ai 1.11.0,
// scripts/deps.d/22-openhands-app.sh) with "process" sandboxes whose agent
// server is gohands serve (a launcher takes the app's `PYTHON -m MODULE
// --port N` and runs `gohands serve --port N`; the app passes
// SESSION_API_KEY and, here, OH_WEBHOOKS_0_BASE_URL back to itself). The
// test drives the app through its own V1 REST API only: it sets the model
// (the scripted one), creates an app conversation with a task, waits for
// the app to report it finished, reads its events (which reach the app by
// gohands' webhooks) and the file the agent wrote (which the app reads
// through gohands' file route). Every call the app made to gohands is
// listed in the log; none may fail with 401, 422 or 5xx.
// testdata/openhands_app.py says what it changes in the app and why.
func TestOpenHandsApp(t *testing.T) {
	t.Parallel()
	py := testenv.OpenHandsAppPython(t)
	bin := gohandsBinary(t)
	m := model(t)
	dir := t.TempDir()
	launcher := filepath.Join(dir, "agent-server")
	script := "#!/bin/sh\n# The app runs: agent-server -m MODULE --port N\n[ \"$1\" = -m ] && shift 2\nexec " + bin + " serve \"$@\"\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper, err := filepath.Abs(filepath.Join("testdata", "openhands_app.py"))
	if err != nil {
		t.Fatal(err)
	}
	// The app gets its socket ready-made: it imports for tens of seconds,
	// and a port merely found free could be taken meanwhile.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	lf, err := l.(*net.TCPListener).File()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	app := fmt.Sprintf("http://127.0.0.1:%d", port)
	trace := filepath.Join(dir, "trace.jsonl")
	cmd := exec.Command(py, wrapper, "3", trace)
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"),
		"RUNTIME=process",
		"OH_SANDBOX_KIND=ProcessSandboxServiceInjector",
		"OH_SANDBOX_PYTHON_EXECUTABLE="+launcher,
		"OH_SANDBOX_BASE_WORKING_DIR="+filepath.Join(dir, "sandboxes"),
		"OH_SANDBOX_BASE_PORT="+strconv.Itoa(freePort(t)),
		"OH_PERSISTENCE_DIR="+filepath.Join(dir, "persist"),
		"FILE_STORE_PATH="+filepath.Join(dir, "files"),
		"OH_WEBHOOKS_0_BASE_URL="+app+"/api/v1/webhooks",
		"LITELLM_LOCAL_MODEL_COST_MAP=True",
		"OPENHANDS_SUPPRESS_BANNER=1",
	)
	logf, err := os.Create(filepath.Join(dir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// The app and the agent servers it starts share a process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		unix.Kill(-cmd.Process.Pid, unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
			<-exited
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("app log (tail):\n%s", tail(b, 6000))
			for _, p := range must(filepath.Glob(filepath.Join(dir, "sandboxes", "*", ".openhands-agent-server.log"))) {
				b, _ := os.ReadFile(p)
				t.Logf("%s (tail):\n%s", p, tail(b, 3000))
			}
		}
	})

	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path string, body any, out any) int {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, app+path, r)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if out != nil && resp.StatusCode < 300 {
			if err := json.Unmarshal(data, out); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, data)
			}
		}
		if resp.StatusCode >= 300 {
			t.Logf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		return resp.StatusCode
	}
	// waitFor polls until done says so; the deadline is a hang guard (the
	// app takes ~40 s to import on a loaded machine).
	waitFor := func(what string, done func() bool) {
		t.Helper()
		deadline := time.Now().Add(4 * time.Minute)
		for !done() {
			select {
			case <-exited:
				t.Fatalf("the app exited while waiting for %s", what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 4 minutes", what)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitFor("answer from the app's /alive", func() bool {
		resp, err := client.Get(app + "/alive")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})

	if c := call("POST", "/api/v1/settings", map[string]any{"agent_settings_diff": map[string]any{
		"llm": map[string]any{"model": "openai/scripted", "base_url": m.URL + "/v1", "api_key": "sk-openhands-app-test"},
	}}, nil); c != 200 {
		t.Fatalf("settings: %d", c)
	}
	var task struct {
		ID string `json:"id"`
	}
	if c := call("POST", "/api/v1/app-conversations", map[string]any{"initial_message": map[string]any{
		"role": "user", "content": []any{map[string]any{"type": "text", "text": "#apptask write hello.txt"}}, "run": true,
	}}, &task); c != 200 && c != 201 {
		t.Fatalf("create app conversation: %d", c)
	}
	var convID, sandboxID string
	waitFor("ready start task", func() bool {
		var page struct {
			Items []struct {
				ID                string `json:"id"`
				Status            string `json:"status"`
				Detail            string `json:"detail"`
				AppConversationID string `json:"app_conversation_id"`
				SandboxID         string `json:"sandbox_id"`
			} `json:"items"`
		}
		call("GET", "/api/v1/app-conversations/start-tasks/search", nil, &page)
		for _, it := range page.Items {
			if it.ID != task.ID {
				continue
			}
			if it.Status == "ERROR" {
				t.Fatalf("the app could not start the conversation: %s", it.Detail)
			}
			convID, sandboxID = it.AppConversationID, it.SandboxID
			return it.Status == "READY"
		}
		return false
	})
	waitFor("finished conversation", func() bool {
		var page struct {
			Items []struct {
				ID              string `json:"id"`
				ExecutionStatus string `json:"execution_status"`
			} `json:"items"`
		}
		call("GET", "/api/v1/app-conversations/search", nil, &page)
		for _, it := range page.Items {
			if it.ID == convID {
				if it.ExecutionStatus == "error" || it.ExecutionStatus == "stuck" {
					t.Fatalf("the conversation ended %s", it.ExecutionStatus)
				}
				return it.ExecutionStatus == "finished"
			}
		}
		return false
	})

	// The events, as the app stored them from gohands' webhooks.
	var kinds []string
	waitFor("finish event in the app", func() bool {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		call("GET", "/api/v1/conversation/"+convID+"/events/search?limit=100", nil, &page)
		kinds = kinds[:0]
		var echoed bool
		for _, e := range page.Items {
			k, _ := e["kind"].(string)
			if tn, ok := e["tool_name"].(string); ok {
				k += ":" + tn
			}
			kinds = append(kinds, k)
			if o, ok := e["observation"].(map[string]any); ok && strings.Contains(fmt.Sprint(o["content"]), "hello-from-app") {
				echoed = true
			}
		}
		return echoed && slices.Contains(kinds, "ActionEvent:finish")
	})
	for _, k := range []string{"SystemPromptEvent", "MessageEvent", "ActionEvent:terminal", "ObservationEvent:terminal", "ObservationEvent:finish"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("the app's events lack %s: %v", k, kinds)
		}
	}

	// The file the agent wrote, read through the app (which reads it
	// through gohands' file route; the path must be absolute there, as on
	// the reference's server).
	file := filepath.Join(dir, "sandboxes", sandboxID, "hello.txt")
	var content string
	if c := call("GET", "/api/v1/app-conversations/"+convID+"/file?file_path="+url.QueryEscape(file), nil, &content); c != 200 || strings.TrimSpace(content) != "hello-from-app" {
		t.Errorf("the agent's file through the app: %d %q", c, content)
	}

	// What the app asked of gohands serve.
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := regexp.MustCompile(`[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}`)
	seen := map[string]int{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Method, URL, Body string
			Status            int
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("trace: %v", err)
		}
		u, err := url.Parse(rec.URL)
		if err != nil || u.Host == fmt.Sprintf("127.0.0.1:%d", port) {
			continue // the app calling itself
		}
		op := fmt.Sprintf("%s %s -> %d", rec.Method, ids.ReplaceAllString(u.Path, "{id}"), rec.Status)
		if seen[op] == 0 {
			order = append(order, op)
		}
		seen[op]++
		if rec.Status == 401 || rec.Status == 422 || rec.Status >= 500 {
			t.Errorf("gohands serve answered the app %s %s with %d: %s", rec.Method, rec.URL, rec.Status, rec.Body)
		}
	}
	if len(order) == 0 {
		t.Fatal("the trace holds no call to the agent server")
	}
	var b strings.Builder
	for _, op := range order {
		fmt.Fprintf(&b, "  %4d× %s\n", seen[op], op)
	}
	t.Logf("what the OpenHands app asked of gohands serve:\n%s", b.String())
}

func must[T any](v T, _ error) T { return v }
