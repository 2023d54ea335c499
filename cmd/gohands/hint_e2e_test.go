package main

import (
	"strings"
	"testing"
)

// TestE2EBareWordIsUnknownCommand: `gohands hi` through the binary is a
// usage error naming the unknown command with a hint on how to give a
// task, and nothing reaches the model.
func TestE2EBareWordIsUnknownCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.mustRun(exitUsage, "hi")
	for _, want := range []string{`unknown command "hi"`, `gohands "hi`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}
