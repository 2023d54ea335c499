package workspace_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/workspace"
)

func TestLocalJSON(t *testing.T) {
	const want = `{"working_dir":"/tmp/w","kind":"LocalWorkspace"}`
	b, err := event.MarshalKinded(&workspace.Local{WorkingDir: "/tmp/w"})
	if err != nil || string(b) != want {
		t.Fatalf("got %s, %v; want %s", b, err, want)
	}
	w, err := event.DecodeKinded[*workspace.Local](b)
	if err != nil || w.WorkingDir != "/tmp/w" {
		t.Fatalf("decode: %#v, %v", w, err)
	}
	if _, err := event.DecodeKinded[*workspace.Local]([]byte(`{"working_dir":"/x","extra":1,"kind":"LocalWorkspace"}`)); err == nil {
		t.Error("accepted an unknown field")
	}
}

func TestLocalExecute(t *testing.T) {
	testExecute(t, &workspace.Local{WorkingDir: t.TempDir()})
}

func TestLocalFiles(t *testing.T) {
	testFiles(t, &workspace.Local{WorkingDir: t.TempDir()})
}

func TestLocalGit(t *testing.T) {
	dir := t.TempDir()
	testGit(t, &workspace.Local{WorkingDir: dir}, dir)
}

// testExecute checks Execute's contract on w, whose working directory
// is empty and writable.
func testExecute(t *testing.T, w workspace.Workspace) {
	t.Helper()
	ctx := t.Context()
	r, err := w.Execute(ctx, "echo out; echo err >&2; pwd; exit 3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.Stderr != "err\n" || r.TimeoutOccurred || !bytes.HasPrefix([]byte(r.Stdout), []byte("out\n")) {
		t.Errorf("result %+v", r)
	}
	wd := r.Stdout[len("out\n"):]
	if _, err := w.Execute(ctx, "mkdir -p sub && touch sub/f", nil); err != nil {
		t.Fatal(err)
	}
	r, err = w.Execute(ctx, "ls; pwd", &workspace.ExecOptions{Cwd: "sub"})
	if err != nil || r.ExitCode != 0 || r.Stdout != "f\n"+wd[:len(wd)-1]+"/sub\n" {
		t.Errorf("relative cwd: %+v, %v", r, err)
	}
	start := time.Now()
	// The child sleeping in the background must not hold Execute up.
	r, err = w.Execute(ctx, "sleep 60 & echo started; sleep 60", &workspace.ExecOptions{Timeout: time.Second})
	if err != nil || r.ExitCode != -1 || !r.TimeoutOccurred || r.Stdout != "started\n" {
		t.Errorf("timeout: %+v, %v", r, err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("timeout took %v", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := w.Execute(cctx, "sleep 60", nil); err == nil {
		t.Error("cancelled Execute returned no error")
	}
}

func testFiles(t *testing.T, w workspace.Workspace) {
	t.Helper()
	ctx := t.Context()
	local := t.TempDir()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	src := filepath.Join(local, "src.bin")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Upload(ctx, src, "a/b/up.bin"); err != nil {
		t.Fatal(err)
	}
	r, err := w.Execute(ctx, "wc -c < a/b/up.bin", nil)
	if err != nil || r.Stdout != "3145745\n" {
		t.Errorf("uploaded size: %+v, %v", r, err)
	}
	dst := filepath.Join(local, "x", "y", "down.bin")
	if err := w.Download(ctx, "a/b/up.bin", dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
		t.Errorf("downloaded %d bytes, %v; want %d", len(got), err, len(data))
	}
	if err := w.Download(ctx, "missing", filepath.Join(local, "m")); err == nil {
		t.Error("downloaded a missing file")
	}
	if _, err := os.Stat(filepath.Join(local, "m")); err == nil {
		t.Error("a failed download left a file")
	}
	if err := w.Upload(ctx, filepath.Join(local, "missing"), "m"); err == nil {
		t.Error("uploaded a missing file")
	}
}

// testGit checks GitChanges and GitDiff on w whose working directory is
// the local directory dir (shared with the test, to set the repository up).
func testGit(t *testing.T, w workspace.Workspace, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	ctx := t.Context()
	if ch, err := w.GitChanges(ctx, "."); err != nil || len(ch) != 0 {
		t.Errorf("outside a repository: %v, %v", ch, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := w.GitDiff(ctx, "outside.txt"); err != nil || d.Modified != nil || d.Original != nil {
		t.Errorf("diff outside a repository: %+v, %v", d, err)
	}
	// A file on neither side is an error, as the reference's GitPathError.
	if d, err := w.GitDiff(ctx, "nothing.txt"); err == nil {
		t.Errorf("diff of a missing file outside a repository: %+v, want an error", d)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("keep.txt", "one\n")
	write("gone.txt", "x\n")
	run("add", ".")
	run("commit", "-qm", "first")
	write("keep.txt", "two\n")
	write("new.txt", "n\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	ch, err := w.GitChanges(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ch, func(a, b workspace.GitChange) int { return bytes.Compare([]byte(a.Path), []byte(b.Path)) })
	want := []workspace.GitChange{{"DELETED", "gone.txt"}, {"UPDATED", "keep.txt"}, {"ADDED", "new.txt"}}
	if !slices.Equal(ch, want) {
		t.Errorf("changes %v, want %v", ch, want)
	}
	d, err := w.GitDiff(ctx, "keep.txt")
	if err != nil || d.Original == nil || d.Modified == nil || *d.Original != "one" || *d.Modified != "two" {
		t.Errorf("diff %+v, %v", d, err)
	}
	// A deletion diffs as its base side against nothing.
	d, err = w.GitDiff(ctx, "gone.txt")
	if err != nil || d.Original == nil || d.Modified == nil || *d.Original != "x" || *d.Modified != "" {
		t.Errorf("diff of a deleted file %+v, %v", d, err)
	}
	if d, err := w.GitDiff(ctx, "never.txt"); err == nil {
		t.Errorf("diff of a file on neither side: %+v, want an error", d)
	}
}
