package refenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

// TestEnvIgnoresCallersRC: an interactive login bash started with Env
// does not run the rc files of the caller's HOME.
func TestEnvIgnoresCallersRC(t *testing.T) {
	bash := testenv.Program(t, "bash")
	caller := t.TempDir()
	for _, rc := range []string{".bashrc", ".profile", ".bash_profile"} {
		if err := os.WriteFile(filepath.Join(caller, rc), []byte("echo CALLER-RC-RAN\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", caller)
	home := t.TempDir()
	cmd := exec.Command(bash, "-lic", `echo "home=$HOME tmux=$TMUX_TMPDIR"`)
	cmd.Env = Env(home, "EXTRA=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "CALLER-RC-RAN") {
		t.Errorf("the caller's rc file ran:\n%s", out)
	}
	if want := "home=" + home + " tmux=" + home; !strings.Contains(string(out), want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}

// TestCleanupEndsTmuxServer: the tmux servers a reference program starts
// under Env(home), on 1.43.1's socket name and on 1.58.2's per-terminal
// ones, are gone after Cleanup(home), and a server under another home is
// untouched.
func TestCleanupEndsTmuxServer(t *testing.T) {
	tmux := testenv.Program(t, "tmux")
	run := func(home, sock string, args ...string) error {
		cmd := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = Env(home)
		return cmd.Run()
	}
	socks := []string{"openhands", "openhands-99ff07c2d1f6430d", "openhands-68eb110266d4420b"}
	a, b := t.TempDir(), t.TempDir()
	for _, home := range []string{a, b} {
		for _, sock := range socks {
			if err := run(home, sock, "new-session", "-d", "-s", "s", "sleep 600"); err != nil {
				t.Fatalf("tmux -L %s new-session: %v", sock, err)
			}
		}
	}
	t.Cleanup(func() { Cleanup(b) })
	Cleanup(a)
	for _, sock := range socks {
		if run(a, sock, "has-session", "-t", "s") == nil {
			t.Errorf("the session on %s under the cleaned home is still there", sock)
		}
		if err := run(b, sock, "has-session", "-t", "s"); err != nil {
			t.Errorf("the session on %s under the other home is gone: %v", sock, err)
		}
	}
	Cleanup(a) // no server: no error, no hang
}
