package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/preset"

	"golang.org/x/sys/unix"
)

// childArg, as the first argument, makes this program a child that runs
// one gohands job (replay or resume) and prints its RESULT line, as
// reference.py does for the reference: both sides are timed the same way,
// inside a fresh process, after its start-up. Timing gohands inside the
// long-lived compare process instead would give it a warm heap, warm code
// paths and the model server's kept-alive connections.
const childArg = "child"

// childArgv returns the command line of a child running job with args.
func childArgv(job string, args ...string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return append([]string{self, childArg, job}, args...), nil
}

// runChild runs the job that os.Args names if this process is a child,
// and reports whether it was: the caller then exits.
func runChild() bool {
	if len(os.Args) < 3 || os.Args[1] != childArg {
		return false
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var out any
	var err error
	switch job, args := os.Args[2], os.Args[3:]; {
	case (job == "replay" || job == "open") && len(args) == 1:
		replay := replayGohands
		if job == "open" {
			replay = openGohands
		}
		var d time.Duration
		var n int
		cpu0 := cpuTime()
		d, n, err = replay(args[0])
		// The CPU time is only for the log (-v): the reference's is not known.
		out = map[string]any{"ms": float64(d) / 1e6, "events": n, "cpu_ms": float64(cpuTime()-cpu0) / 1e6}
	case job == "resume" && len(args) == 4:
		var t0 time.Time
		t0, err = resumeGohands(ctx, args[0], args[1], args[2], args[3])
		out = map[string]any{"t0_unix_ns": t0.UnixNano()}
	default:
		err = fmt.Errorf("unknown child job %q", os.Args[2:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare child:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(out)
	fmt.Printf("\nRESULT %s\n", b)
	return true
}

// cpuTime is the CPU time this process has used, all threads.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// replayGohands reads the event log in dir and decodes every event, as
// reference.py's replay does (EventLog over the events directory): both
// only read, neither locks. It returns the time taken and the number of
// events.
func replayGohands(dir string) (time.Duration, int, error) {
	start := time.Now()
	events, err := filestore.ReadEvents(dir)
	if err != nil {
		return 0, 0, err
	}
	return time.Since(start), len(events), nil
}

// openGohands opens the conversation's store in dir for appending (its
// lock taken, its index cache rewritten in the background), loads the log
// and takes every event from it, as a resume does before its first step.
// Like replayGohands it leaves base_state.json alone, which the resume row
// reads.
func openGohands(dir string) (time.Duration, int, error) {
	start := time.Now()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		return 0, 0, err
	}
	n := log.Len()
	for i := range n {
		if _, err := log.Event(context.Background(), i); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start), n, nil
}

// resumeGohands continues conversation id stored under base with a
// message and runs it, as reference.py's resume does; it returns when it
// started.
func resumeGohands(ctx context.Context, modelURL, base, ws, id string) (time.Time, error) {
	start := time.Now()
	cfg := llm.DefaultConfig("openai/bench")
	cfg.BaseURL = modelURL + "/v1"
	cfg.APIKey = secret.New("bench")
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg, nil), ws, &conversation.LocalOptions{
		ID: id, Backend: filestore.NewBackend(base, nil),
	})
	if err != nil {
		return start, fmt.Errorf("resume: %w", err)
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage("go on")); err != nil {
		return start, err
	}
	return start, conv.Run(ctx)
}
