package main

import (
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
)

// TestShowAndRm: show renders a stored conversation by an id prefix, rm
// asks first, refuses a conversation in use and deletes one when told.
func TestShowAndRm(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("The answer is 42."))
	e.mustRun(exitOK, e.args("what is the answer?")...)
	prefix := e.id[:8]

	r := e.mustRun(exitOK, "show", "--persistence-dir", e.data, prefix)
	for _, want := range []string{"what is the answer?", "The answer is 42.", "System Prompt"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.mustRun(exitOK, "show", "--json", "--persistence-dir", e.data, e.id)
	if n := strings.Count(r.stdout, "\n") + 1; n < 4 || !strings.Contains(r.stdout, `"kind":"SystemPromptEvent"`) {
		t.Errorf("show --json printed %d lines:\n%s", n, r.stdout)
	}
	e.mustRun(exitUsage, "show", "--persistence-dir", e.data, "ffffffff")

	// Asked, and "n" keeps it.
	e.stdin = "n\n"
	r = e.mustRun(exitOK, "rm", "--persistence-dir", e.data, prefix)
	if !strings.Contains(r.stderr, "Delete conversation "+e.id) || !strings.Contains(r.stderr, "kept") {
		t.Errorf("rm did not ask:\n%s", r.stderr)
	}
	if _, err := os.Stat(e.dir()); err != nil {
		t.Fatalf("refused rm deleted it: %v", err)
	}

	// In use by another process (this one holds its lock): refused.
	st, err := filestore.Open(e.dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(exitError, "rm", "--yes", "--persistence-dir", e.data, prefix)
	if !strings.Contains(r.stderr, "in use by another process") {
		t.Errorf("rm of a conversation in use: %s", r.stderr)
	}
	// show still reads it, without the lock.
	if r := e.mustRun(exitOK, "show", "--persistence-dir", e.data, prefix); !strings.Contains(r.stdout, "The answer is 42.") {
		t.Errorf("show of a conversation in use:\n%s", r.stdout)
	}
	st.Close()
	if _, err := os.Stat(e.dir()); err != nil {
		t.Fatalf("refused rm deleted it: %v", err)
	}

	e.stdin = "y\n"
	r = e.mustRun(exitOK, "rm", "--persistence-dir", e.data, prefix)
	if !strings.Contains(r.stdout, "deleted "+e.id) {
		t.Errorf("rm said:\n%s\n%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(e.dir()); !os.IsNotExist(err) {
		t.Errorf("the conversation's directory is still there: %v", err)
	}
}
