//go:build linux

package terminal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
)

// TestSecretSplitAcrossReads: a secret whose first half is printed before
// a read returns and whose second half comes after is masked whole; no
// observation holds a piece of it.
func TestSecretSplitAcrossReads(t *testing.T) {
	t.Parallel()
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

// TestSecretAtDroppedEdge: output past the buffer bound drops its oldest
// bytes at an arbitrary point, often inside a secret; the piece of it left
// at the start of what is kept is dropped too, in the observation and in
// the live output.
func TestSecretAtDroppedEdge(t *testing.T) {
	t.Parallel()
	const value = "sk-edge-ABCDEF1234567"
	m := secret.NewManager(secret.Registry{}, nil)
	m.Hide(value)
	term := newTerminal(t, &Options{NoChangeTimeout: quiet, Mask: m.Mask, Partial: m.PartialSuffix, PartialStart: m.PartialPrefix})
	dir := term.opts.WorkingDir
	// More than floodLimit returns the first read. Then, written only
	// after it returned, more than the bound piles up before the next:
	// however late the first read noticed the flood, bytes are dropped.
	whole := func(n int) string { return strconv.Itoa(n - n%(len(value)+1)) } // whole lines: the last is not cut
	flood := "yes " + value + " | head -c "
	o1 := run(t, term, Action{Command: flood + whole(floodLimit+1<<20) + "; while [ ! -e pile ]; do sleep 0.05; done; " +
		flood + whole(maxBuffered+5<<20) + "; touch finished; while [ ! -e gate ]; do sleep 0.05; done"})
	if exitCode(o1) != -1 {
		t.Fatalf("first read: exit %d", exitCode(o1))
	}
	if err := os.WriteFile(filepath.Join(dir, "pile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "finished")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not finish within 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var live strings.Builder
	ctx := tool.WithOutput(context.Background(), func(s string) { live.WriteString(s) })
	time.AfterFunc(time.Second, func() { os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644) })
	o2, err := term.Run(ctx, &Action{Command: "", Timeout: new(120.0)})
	if err != nil {
		t.Fatal(err)
	}
	text := o2.Text()
	if !strings.Contains(text, "bytes of output were dropped") {
		t.Fatalf("no bytes were dropped: %.300q", text)
	}
	for name, s := range map[string]string{"first observation": o1.Text(), "second observation": text, "live output": live.String()} {
		for line := range strings.SplitSeq(s, "\n") {
			line = strings.TrimSpace(line)
			if strings.Contains(line, "sk-edge") || line != "" && strings.Contains(value, line) {
				t.Errorf("%s holds a piece of the secret: %.200q", name, line)
				break
			}
		}
	}
}

// TestSecretsLastOneCommand: a secret exported for a command is gone from
// the shell once it ends, and is not on disk while it runs.
func TestSecretsLastOneCommand(t *testing.T) {
	t.Parallel()
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

// TestPollAfterUnreadEnd: a command that outlived its call and ended
// before the next poll is reported by that poll (its exit code), not
// refused as "no command is running".
func TestPollAfterUnreadEnd(t *testing.T) {
	t.Parallel()
	term := newTerminal(t, &Options{NoChangeTimeout: quiet})
	o := run(t, term, Action{Command: `while [ ! -e gate ]; do sleep 0.05; done; echo through`})
	if exitCode(o) != -1 {
		t.Fatalf("exit %d, want -1 (still running)", exitCode(o))
	}
	os.WriteFile(filepath.Join(term.opts.WorkingDir, "gate"), nil, 0o644)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		term.mu.Lock()
		done, _ := term.sess.status()
		term.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not end within a minute of its gate")
		}
	}
	expect(t, run(t, term, Action{Command: ""}), "through", 0)
	// Nothing is left to report now.
	if o := run(t, term, Action{Command: ""}); exitCode(o) != -2 {
		t.Errorf("second poll: exit %d, want -2 (no command running):\n%s", exitCode(o), o.Text())
	}
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
