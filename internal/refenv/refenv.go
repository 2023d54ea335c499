// Package refenv is the environment the Python reference's programs run in
// when the tests and the comparison start them: quiet, offline, and
// hermetic.
//
// Hermetic matters for the reference's terminal: it types its set-up into
// an interactive bash under tmux, and that bash reads $HOME/.bashrc. A
// developer's rc file can take any time to run (pyenv's rehash waits 60 s
// on a lock a killed shell left behind), and the set-up typed meanwhile is
// lost, so every command then times out. A private HOME has no rc file,
// and a private TMUX_TMPDIR gives each user of this package its own tmux
// server, which Cleanup ends (the reference leaves its sessions running
// when it exits).
package refenv

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Quiet is what every reference program gets: no telemetry, no banner,
// LiteLLM's bundled model prices (no download attempt).
var Quiet = []string{
	"LITELLM_LOCAL_MODEL_COST_MAP=True",
	"OPENHANDS_SUPPRESS_BANNER=1",
	"OH_TELEMETRY_CONSENT=false",
}

// Env returns this process's environment with Quiet, HOME and TMUX_TMPDIR
// set to home (a private directory the caller made), then extra.
func Env(home string, extra ...string) []string {
	env := append(os.Environ(), Quiet...)
	env = append(env, "HOME="+home, "TMUX_TMPDIR="+home)
	return append(env, extra...)
}

// Cleanup ends every tmux server that reference programs run with Env(home)
// started, with every session in it. It is a no-op when there is none.
func Cleanup(home string) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return
	}
	// 1.43.1 names its socket "openhands"; 1.58.2 names one per terminal,
	// "openhands-<hex>". Under a private TMUX_TMPDIR every socket there is
	// the reference's, so each is ended whatever its name.
	socks, _ := filepath.Glob(filepath.Join(home, "tmux-*", "*"))
	for _, sock := range socks {
		cmd := exec.Command(tmux, "-S", sock, "kill-server")
		cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+home)
		_ = cmd.Run() // a stale socket: nothing to end
	}
}
