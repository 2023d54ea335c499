package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/telemetry/oteltrace"
)

// Exit statuses.
const (
	exitOK           = 0
	exitError        = 1
	exitUsage        = 2
	exitStuck        = 3
	exitMaxIter      = 4
	exitConfirmation = 5
	exitRefused      = 6   // HIGH risk actions were refused, unattended
	exitPaused       = 130 // 128 + SIGINT, as shells report an interrupted command
)

// exitErr ends the program with a status and a one-line reason.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitErr{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// main runs the command line args and returns the exit status.
func (a *app) main(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if a.tracing != nil {
		// Spans still buffered are exported before the process ends.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if serr := a.tracing.Shutdown(sctx); serr != nil {
			fmt.Fprintf(a.stderr, "gohands: exporting traces: %s\n", termtext.Strip(serr.Error()))
		}
		cancel()
	}
	if err == nil {
		return exitOK
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		if ee.msg != "" {
			// The reason may quote the model or a stored event.
			fmt.Fprintf(a.stderr, "gohands: %s\n", termtext.Strip(ee.msg))
		}
		return ee.code
	}
	// Cobra's own errors (unknown flags or commands) are usage errors.
	fmt.Fprintf(a.stderr, "gohands: %s\nRun 'gohands --help' for usage.\n", termtext.Strip(err.Error()))
	return exitUsage
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "gohands",
		Short: "A software-engineering agent that works in a directory",
		Long: `gohands runs an AI agent that reads, edits and runs code in a directory,
with a terminal, a file editor and a task list.

Configure the model with --model or LLM_MODEL (for example
anthropic/claude-sonnet-4-5 or openai/gpt-5.5), its key with --api-key or
LLM_API_KEY, and, for an OpenAI-compatible server, --base-url or
LLM_BASE_URL.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	var traceFile string
	root.PersistentFlags().StringVar(&traceFile, "trace", "", "write the spans of the run (conversation, steps, model and tool calls) to `file` as OTLP JSON; OTEL_EXPORTER_OTLP_* variables export them too")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		p, err := oteltrace.Setup(cmd.Context(), &oteltrace.Options{File: traceFile})
		if err != nil {
			return &exitErr{code: exitUsage, msg: err.Error()}
		}
		a.tracing = p
		return nil
	}
	root.AddCommand(a.runCmd(), a.lsCmd(), a.acpCmd(), a.serveCmd(), a.mcpCmd(), a.skillsCmd(), a.pluginsCmd(), a.evalCmd(), a.exportCmd(), a.importCmd(), a.doctorCmd())
	root.AddCommand(a.showCmd(), a.rmCmd(), a.versionCmd())
	a.interactive(root)
	return root
}

// defaultPersistenceDir is where conversations are stored unless
// --persistence-dir says otherwise: $XDG_DATA_HOME/gohands/conversations,
// or the platform's data directory (~/.local/share on Linux and BSD, the
// user configuration directory on macOS and Windows).
func (a *app) defaultPersistenceDir() (string, error) {
	if d := a.getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "gohands", "conversations"), nil
	}
	var base string
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "plan9":
		d, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		base = d
	default:
		home := a.getenv("HOME")
		if home == "" {
			return "", errors.New("neither $XDG_DATA_HOME nor $HOME is set")
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "gohands", "conversations"), nil
}

// persistenceDir returns the --persistence-dir value or the default.
func (a *app) persistenceDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	d, err := a.defaultPersistenceDir()
	if err != nil {
		return "", usageErr("no persistence directory: %v; set --persistence-dir", err)
	}
	return d, nil
}
