package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/internal/testenv"
)

// A conversation moves from a persistence directory into PostgreSQL and
// back out, byte for byte: import, export, then gohands run continues the
// exported copy.
func TestE2EExportImportPostgres(t *testing.T) {
	t.Parallel()
	srv, err := pgtest.Start()
	if err != nil {
		testenv.Missing(t, "PostgreSQL: %v", err)
	}
	t.Cleanup(srv.Stop)
	dsn := srv.NewDatabase(t)

	e := newE2E(t, finishReply("first done"))
	e.mustRun(0, e.args("first task")...)
	orig := e.dir()

	r := e.mustRun(0, "import", "--store", dsn, orig)
	if !strings.Contains(r.stdout, "imported "+e.id) {
		t.Errorf("import: %s", r.stdout)
	}
	// Twice is refused: the conversation is there already.
	if r := e.run("import", "--store", dsn, orig); r.code != 1 || !strings.Contains(r.stderr, "already holds") {
		t.Errorf("second import: exit %d, %s", r.code, r.stderr)
	}

	out := t.TempDir()
	e.mustRun(0, "export", "--store", dsn, e.id, out)
	copyDir := filestore.Dir(out, e.id)
	for _, name := range files(t, orig) {
		want, _ := os.ReadFile(filepath.Join(orig, name))
		got, err := os.ReadFile(filepath.Join(copyDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs after import and export: %v\ngot  %s\nwant %s", name, err, got, want)
		}
	}

	// The exported copy is a conversation gohands continues.
	e.srv.Add(finishReply("second done"))
	e.mustRun(0, "run", "--workspace", e.work, "--persistence-dir", out, "--conversation-id", e.id, "--llm-config", e.config, "second task")

	if r := e.run("export", "--store", dsn, "00000000-0000-4000-8000-000000000000", out); r.code != 1 || !strings.Contains(r.stderr, "no conversation") {
		t.Errorf("export of an unknown id: exit %d, %s", r.code, r.stderr)
	}
	if r := e.run("export", "--store", "mysql://x", e.id, out); r.code != 2 {
		t.Errorf("a non-postgres store: exit %d, %s", r.code, r.stderr)
	}
}

// files lists the conversation's files that a copy must reproduce: the
// base state and the event files (not locks or caches).
func files(t *testing.T, dir string) []string {
	t.Helper()
	out := []string{filestore.BaseStateFile}
	evs, err := os.ReadDir(filepath.Join(dir, filestore.EventsDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.HasPrefix(e.Name(), "event-") {
			out = append(out, filepath.Join(filestore.EventsDir, e.Name()))
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %v in %s", out, dir)
	}
	return out
}
