package terminal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

func init() {
	tool.Register(Name, factory)
}

const description = `Run a bash command in a persistent shell. The working directory, environment variables, shell functions and background jobs carry over from one call to the next.
* Send one command per call; chain steps with && or ;. Multi-line scripts and heredocs are fine.
* If a command prints nothing for %s, the call returns with its output so far and exit code -1 while it keeps running. Then send an empty command to read more, is_input=true to type into it (text, or keys such as C-c, C-d, ENTER, UP), or C-c to stop it. Only one command runs at a time.
* For builds, installs and test runs, set timeout to the seconds you are willing to wait.
* Prefer non-interactive flags (apt-get -y, git --no-pager). Run servers in the background with their output in a file: cmd > server.log 2>&1 &
* Output over 30,000 characters is cut in the middle; the full output is saved to a file named in the result.
* A top-level exit ends the shell; the next call starts a new one.`

// NewTool returns the terminal tool, with its own Terminal. The tool's
// Close closes the Terminal.
func NewTool(opts *Options) *tool.Typed[Action, *Observation] {
	t := New(opts)
	desc := fmt.Sprintf(description, seconds(t.opts.NoChangeTimeout.Seconds()))
	return tool.New(Name, desc, t.Run, &tool.Options{
		Kind: "TerminalTool",
		Annotations: &event.ToolAnnotations{
			Title:           Name,
			ReadOnlyHint:    false,
			DestructiveHint: true,
			IdempotentHint:  false,
			OpenWorldHint:   true,
		},
		Close:   t.Close,
		Aliases: aliases,
		Repair:  repair,
	})
}

// params are the parameters of a terminal tool spec, as the reference's
// TerminalTool.create takes them.
type params struct {
	// NoChangeTimeoutSeconds overrides DefaultNoChangeTimeout.
	NoChangeTimeoutSeconds *float64 `json:"no_change_timeout_seconds"`
	// ShellPath is the bash binary.
	ShellPath string `json:"shell_path"`
	// Env is added to the shell's environment.
	Env map[string]string `json:"env"`
	// TerminalType selects the reference's backend; every Unix backend is
	// the same pty session here.
	TerminalType string `json:"terminal_type"`
	// Username is accepted only when it names the current user: the
	// shell runs as the process's user.
	Username string `json:"username"`
}

// factory makes the tool of a spec. Full outputs are saved under the
// conversation's observations directory.
func factory(ctx tool.Context, raw json.RawMessage) ([]tool.Tool, error) {
	var p params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range p.Env {
		if !envName.MatchString(k) {
			return nil, fmt.Errorf("params: env: invalid variable name %q", k)
		}
	}
	opts := &Options{WorkingDir: ctx.WorkingDir, Shell: p.ShellPath, SessionEnv: p.Env, Env: ctx.SecretEnv, Mask: ctx.Mask, Partial: ctx.Partial, PartialStart: ctx.PartialStart}
	if ctx.ConversationDir != "" {
		opts.SaveDir = filepath.Join(ctx.ConversationDir, "observations")
	}
	if n := p.NoChangeTimeoutSeconds; n != nil {
		if *n <= 0 {
			return nil, fmt.Errorf("params: no_change_timeout_seconds must be positive, got %v", *n)
		}
		opts.NoChangeTimeout = time.Duration(*n * float64(time.Second))
	}
	switch p.TerminalType {
	case "", "tmux", "subprocess":
	default:
		return nil, fmt.Errorf("params: terminal_type %q is not supported (want tmux or subprocess; both are a pty session here)", p.TerminalType)
	}
	if p.Username != "" {
		if u, err := user.Current(); err != nil || u.Username != p.Username {
			return nil, fmt.Errorf("params: username %q: the shell can only run as the current user", p.Username)
		}
	}
	if opts.WorkingDir != "" {
		if fi, err := os.Stat(opts.WorkingDir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("working directory %q is not a directory", opts.WorkingDir)
		}
	}
	return []tool.Tool{NewTool(opts)}, nil
}
