// Command gohands runs a software-engineering agent in a directory.
//
//	gohands run [flags] TASK    run the agent on TASK until it finishes
//	gohands ls [flags]          list stored conversations
//
// The model is chosen with --model (or LLM_MODEL), e.g.
// anthropic/claude-sonnet-4-5 or openai/gpt-5.5, its key with --api-key (or
// LLM_API_KEY), and an OpenAI-compatible server with --base-url (or
// LLM_BASE_URL). Conversations are stored under --persistence-dir
// (default $XDG_DATA_HOME/gohands/conversations) in the OpenHands layout,
// and a paused or interrupted one continues with --conversation-id.
//
// Exit status: 0 when the agent finished; otherwise 1 (error), 2 (bad
// usage or configuration), 3 (stuck), 4 (maximum iterations reached), 5
// (waiting for confirmation), 130 (paused by Ctrl-C, SIGINT) or 143 (paused
// by SIGTERM), with a one-line reason on standard error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/telemetry/oteltrace"
)

func main() {
	// The agent's commands can read this process's original command line
	// (/proc/$PPID/cmdline): copy it, then blank the credentials in it.
	os.Args = cloneArgs(os.Args)
	if err := scrubArgs(); err != nil {
		fmt.Fprintf(os.Stderr, "gohands: hiding the credentials on the command line: %v\n", err)
		os.Exit(exitError)
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, unix.SIGTERM)
	a := &app{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, unsetenv: unsetenv, signals: sig, exit: os.Exit,
	}
	os.Exit(a.main(context.Background(), os.Args[1:]))
}

// unsetenv removes name from the environment, and its value from the
// environment the process started with, which /proc/<pid>/environ shows.
func unsetenv(name string) error {
	if _, ok := os.LookupEnv(name); !ok {
		return nil
	}
	if err := os.Unsetenv(name); err != nil {
		return err
	}
	return scrubEnv(name)
}

// app is the command line program with its surroundings, so tests can run
// it in process.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// unsetenv removes a variable from the environment the agent's
	// commands inherit.
	unsetenv func(string) error
	// signals delivers interrupts: the first pauses the run, the second
	// ends the process through exit. nil means none.
	signals <-chan os.Signal
	exit    func(code int)
	// onRetry, if set, reports a failed model call about to be retried
	// (the interactive mode shows it in its status line); nil writes a
	// line to stderr.
	onRetry func(attempt, of int, wait time.Duration, err error)
	// tracing is the trace pipeline --trace and the OTEL_* variables
	// set up, shut down when the command ends; nil when off.
	tracing *oteltrace.Provider
}
