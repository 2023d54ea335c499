package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Exit statuses of a command a signal stopped: 128 + the signal's number,
// as shells report it. An interrupted run is paused and resumable; the
// README's table has both.
const (
	exitInterrupted = 130 // SIGINT (Ctrl-C); also exitPaused
	exitTerminated  = 143 // SIGTERM
)

// stopSignal is the cause of a context a signal cancelled.
type stopSignal struct{ sig os.Signal }

func (s *stopSignal) Error() string { return "stopped by " + signalName(s.sig) }

func signalName(sig os.Signal) string {
	if sig == unix.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// signalStatus is the exit status of a command stopped by sig.
func signalStatus(sig os.Signal) int {
	if sig == unix.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// stoppedStatus reports the exit status of a command whose ctx a signal
// cancelled (see stopOnSignal), and whether one did.
func stoppedStatus(ctx context.Context) (int, bool) {
	var s *stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return signalStatus(s.sig), true
	}
	return 0, false
}

// stopOnSignal returns ctx cancelled at the first SIGINT or SIGTERM, with
// a *stopSignal as its cause: the command stops starting work, cancels
// what waits (a model call, a retry's wait, a tool) and writes what it
// holds. note, if not empty, is said on stderr then. A second signal ends
// the process at once with that signal's status. stop ends the watch.
func (a *app) stopOnSignal(ctx context.Context, note string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case <-done:
				return
			case sig, ok := <-a.signals:
				if !ok {
					return
				}
				if first {
					first = false
					if note != "" {
						fmt.Fprintf(a.stderr, "gohands: %s: %s (again to quit at once)\n", signalName(sig), note)
					}
					cancel(&stopSignal{sig})
					continue
				}
				fmt.Fprintf(a.stderr, "gohands: %s: quitting\n", signalName(sig))
				a.exit(signalStatus(sig))
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(context.Canceled)
	}
}
