package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveBin is a `gohands serve` process on a loopback port.
type serveBin struct {
	t   *testing.T
	URL string
	cmd *exec.Cmd

	mu     sync.Mutex
	stderr bytes.Buffer
}

// startServeProc starts `gohands serve` on a loopback port with home as its
// HOME and XDG directories (its settings are home/gohands/settings.json),
// home/convs as its conversations' path and work as its workspace path,
// with env added to its environment and extra flags, and waits until it
// serves. A second server on the same
// home takes up the first's conversations.
func startServeProc(t *testing.T, home, work string, env []string, extra ...string) *serveBin {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "--host", "127.0.0.1", "--port", "0"}, extra...)...)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_") && !strings.HasPrefix(kv, "OH_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home,
		"OH_CONVERSATIONS_PATH="+filepath.Join(home, "convs"), "OH_WORKSPACE_PATH="+work)
	cmd.Env = append(cmd.Env, env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveBin{t: t, cmd: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if _, rest, ok := strings.Cut(line, "serving the agent API on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		close(addr)
		io.Copy(io.Discard, pipe)
	}()
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatalf("gohands serve ended before serving:\n%s", s.logs())
		}
		s.URL = u
	case <-time.After(time.Minute):
		t.Fatal("gohands serve did not start within a minute")
	}
	return s
}

// logs returns what the server wrote to its standard error so far.
func (s *serveBin) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// kill ends the server with SIGKILL and waits for it.
func (s *serveBin) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd.Wait()
}

// do sends a JSON request (body nil: none) and decodes the response into
// out (nil: discarded); it fails unless the status is want.
func (s *serveBin) do(method, path, body string, want int, out any) {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d, want %d: %s\nserver log:\n%s", method, path, resp.StatusCode, want, b, s.logs())
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// startConversation starts a conversation of an agent with the scripted
// model at modelURL, the tools (a JSON list) and work as its working
// directory, running task, and returns its id.
func (s *serveBin) startConversation(modelURL, tools, work, task string) string {
	s.t.Helper()
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + modelURL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
		`"tools":` + tools + `},"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(work) + `},` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":` + quote(task) + `}],"run":true}}`
	var info struct {
		ID string `json:"id"`
	}
	s.do("POST", "/api/conversations", body, http.StatusCreated, &info)
	return info.ID
}

// status returns a conversation's execution status.
func (s *serveBin) status(id string) string {
	s.t.Helper()
	var info struct {
		Status string `json:"execution_status"`
	}
	s.do("GET", "/api/conversations/"+id, "", http.StatusOK, &info)
	return info.Status
}

// waitStatus waits until the conversation's status is one of want's and
// returns it; the limit is a hang guard.
func (s *serveBin) waitStatus(id string, limit time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := s.status(id)
		if slices.Contains(want, st) {
			return st
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("conversation %s: status %s after %s, want one of %v\nserver log:\n%s", id, st, limit, want, s.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPath waits until path exists; the limit is a hang guard.
func waitPath(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
