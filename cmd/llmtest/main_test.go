package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"

	"golang.org/x/sys/unix"
)

// The command serves a playbook file: it prints its URL, answers by the
// rules, and stops on SIGTERM.
func TestCommand(t *testing.T) {
	goTool := testenv.Program(t, "go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "llmtest")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	book := filepath.Join(dir, "book.json")
	os.WriteFile(book, []byte(`{"rules":[{"first_user":"hello","replies":[{"text":"hi there"}]}]}`), 0o644)
	urlFile := filepath.Join(dir, "url")
	cmd := exec.Command(bin, "-playbook", book, "-url-file", urlFile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (stderr %s)", err, stderr.String())
	}
	url = strings.TrimSpace(url)
	if b, _ := os.ReadFile(urlFile); strings.TrimSpace(string(b)) != url {
		t.Errorf("url file %q, stdout %q", b, url)
	}
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hi there") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	resp, err = http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"other"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unanswerable request: status %d, want 400", resp.StatusCode)
	}
	cmd.Process.Signal(unix.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10 s after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "no playbook rule") {
		t.Errorf("stderr does not log the unanswered request: %s", stderr.String())
	}
}

func TestBadPlaybook(t *testing.T) {
	goTool := testenv.Program(t, "go")
	book := filepath.Join(t.TempDir(), "book.json")
	os.WriteFile(book, []byte(`{"rules":[{"replies":[{"txt":"x"}]}]}`), 0o644)
	out, err := exec.Command(goTool, "run", ".", "-playbook", book).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unknown field") {
		t.Errorf("err %v, output %s", err, out)
	}
}
