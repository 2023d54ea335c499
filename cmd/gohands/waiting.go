package main

import (
	"fmt"
	"io"
	"time"
)

// spinnerFrames are the waiting indicator's frames.
var spinnerFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// waitAfter is how long the transcript must be quiet before the waiting
// indicator shows.
const waitAfter = 400 * time.Millisecond

// showWaiting draws a spinner and the time since the transcript last
// showed something on w (a terminal) until done is closed, whenever the
// transcript is quiet at the start of a line. The transcript clears it
// before it writes.
func (t *transcript) showWaiting(w io.Writer, done <-chan struct{}) {
	t.mu.Lock()
	t.waitW, t.last = w, time.Now()
	t.mu.Unlock()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for frame := 0; ; frame++ {
		select {
		case <-done:
			t.mu.Lock()
			t.clearWaiting()
			t.waitW = nil
			t.mu.Unlock()
			return
		case <-tick.C:
		}
		t.mu.Lock()
		if quiet := time.Since(t.last); !t.held && t.lineStart && quiet >= waitAfter {
			fmt.Fprintf(w, "\r\x1b[K%c working… %s (Ctrl-C pauses)", spinnerFrames[frame%len(spinnerFrames)],
				quiet.Truncate(time.Second))
			t.waitShown = true
		}
		t.mu.Unlock()
	}
}

// clearWaiting erases the indicator; t.mu is held.
func (t *transcript) clearWaiting() {
	t.last = time.Now()
	if t.waitShown {
		fmt.Fprint(t.waitW, "\r\x1b[K")
		t.waitShown = false
	}
}

// hold stops the indicator (while a question is asked) or lets it go on.
func (t *transcript) hold(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if on {
		t.clearWaiting()
	}
	t.held = on
	t.last = time.Now()
}
