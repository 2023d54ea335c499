//go:build linux

package terminal

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/secret"
)

// TestSecretSplitAcrossReads: a secret whose first half is printed before
// a read returns and whose second half comes after is masked whole; no
// observation holds a piece of it.
func TestSecretSplitAcrossReads(t *testing.T) {
	const value = "sk-split-ABCDEF1234567"
	m := secret.NewManager(secret.Registry{}, nil)
	m.Hide(value)
	term := newTerminal(t, &Options{NoChangeTimeout: quiet, Mask: m.Mask, Partial: m.PartialSuffix})
	gate := filepath.Join(term.opts.WorkingDir, "gate")
	o1 := run(t, term, Action{Command: `printf 'before sk-split-'; while [ ! -e gate ]; do sleep 0.05; done; printf 'ABCDEF1234567 after\n'`})
	if exitCode(o1) != -1 {
		t.Fatalf("first read: exit %d, %q", exitCode(o1), o1.Text())
	}
	os.WriteFile(gate, nil, 0o644)
	o2 := run(t, term, Action{Command: "", Timeout: new(30.0)})
	for i, o := range []*Observation{o1, o2} {
		if s := o.Text(); strings.Contains(s, "sk-split") || strings.Contains(s, "ABCDEF") {
			t.Errorf("observation %d shows part of the secret: %q", i+1, s)
		}
	}
	if !strings.Contains(o1.Text(), "before") || !strings.Contains(o2.Text(), secret.Hidden+" after") {
		t.Errorf("observations: %q, %q", o1.Text(), o2.Text())
	}
}

// TestSecretsLastOneCommand: a secret exported for a command is gone from
// the shell once it ends, and is not on disk while it runs.
func TestSecretsLastOneCommand(t *testing.T) {
	const value = "tok-one-command-9a8b7c"
	term := newTerminal(t, &Options{
		NoChangeTimeout: quiet,
		Env: func(command string) map[string]string {
			if strings.Contains(command, "API_TOKEN") {
				return map[string]string{"API_TOKEN": value}
			}
			return nil
		},
	})
	expect(t, run(t, term, Action{Command: `[ "$API_TOKEN" = ` + value + ` ] && echo set`}), "set", 0)
	if o := run(t, term, Action{Command: `env | rev; echo "[$(printenv | grep -c tok-one)]"`}); strings.Contains(o.Text(), reverse(value)) || !strings.Contains(o.Text(), "[0]") {
		t.Errorf("the secret outlived its command:\n%s", o.Text())
	}
	// While a command that uses it runs, its file holds no secret.
	gate := filepath.Join(term.opts.WorkingDir, "gate")
	o := run(t, term, Action{Command: `: "$API_TOKEN"; while [ ! -e gate ]; do sleep 0.05; done`})
	if exitCode(o) != -1 {
		t.Fatalf("exit %d", exitCode(o))
	}
	term.mu.Lock()
	script := term.sess.script()
	term.mu.Unlock()
	if b, err := os.ReadFile(script); err == nil && strings.Contains(string(b), value) {
		t.Errorf("the command file holds the secret while the command runs: %q", b)
	}
	os.WriteFile(gate, nil, 0o644)
	expect(t, run(t, term, Action{Command: "", Timeout: new(30.0)}), "", 0)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// TestStaleSessionDirsRemoved: a session directory whose gohands was
// killed is removed when a session starts; a live one is kept.
func TestStaleSessionDirsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(tmp, "gohands-terminal-stale")
	live := filepath.Join(tmp, "gohands-terminal-live")
	for d, pid := range map[string]int{stale: dead.Process.Pid, live: os.Getppid()} {
		os.Mkdir(d, 0o700)
		os.WriteFile(filepath.Join(d, "owner"), []byte(strconv.Itoa(pid)), 0o600)
		os.WriteFile(filepath.Join(d, "cmd"), []byte("export API_TOKEN=x\n"), 0o600)
	}
	cleanStaleOnce = sync.Once{}
	term := newTerminal(t, nil)
	expect(t, run(t, term, Action{Command: "echo hi"}), "hi", 0)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale directory left: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
}
