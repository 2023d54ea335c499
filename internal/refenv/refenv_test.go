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

// TestCleanupEndsTmuxServer: the tmux server a reference program starts
// on its socket under Env(home) is gone after Cleanup(home), and a server
// under another home is untouched.
func TestCleanupEndsTmuxServer(t *testing.T) {
	tmux := testenv.Program(t, "tmux")
	run := func(home string, args ...string) error {
		cmd := exec.Command(tmux, append([]string{"-L", "openhands", "-f", "/dev/null"}, args...)...)
		cmd.Env = Env(home)
		return cmd.Run()
	}
	a, b := t.TempDir(), t.TempDir()
	for _, home := range []string{a, b} {
		if err := run(home, "new-session", "-d", "-s", "s", "sleep 600"); err != nil {
			t.Fatalf("tmux new-session: %v", err)
		}
	}
	t.Cleanup(func() { Cleanup(b) })
	Cleanup(a)
	if run(a, "has-session", "-t", "s") == nil {
		t.Error("the session under the cleaned home is still there")
	}
	if err := run(b, "has-session", "-t", "s"); err != nil {
		t.Errorf("the session under the other home is gone: %v", err)
	}
	Cleanup(a) // no server: no error, no hang
}
