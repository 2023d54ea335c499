package server_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

func mustRun(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
	return string(out)
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listTree lists the regular files under root with their contents, and
// the directories, by slash path.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case fi.IsDir():
			out[rel+"/"] = ""
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			out[rel] = string(data)
		default:
			out[rel] = "special " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchiveTarGz archives a tree with GNU tar as the peer: what tar
// extracts is the tree without its excluded parts, its symbolic links
// and the credentials of its .git; the manifest counts the files; a link
// to a directory or file outside brings nothing of it in.
func TestArchiveTarGz(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tar"); err != nil {
		t.Fatal("tar is needed:", err)
	}
	ts := newTestServer(t, nil)
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	writeTree(t, outside, map[string]string{"secret.txt": "SECRET"})
	work := filepath.Join(base, "work")
	writeTree(t, work, map[string]string{
		"a.txt":                  "alpha\n",
		"sub/b.txt":              "beta\n",
		"sub/deep/c.bin":         "\x00\x01\x02",
		"node_modules/x/i.js":    "dep",
		"keep/build":             "a file named like an excluded directory",
		"build/out.o":            "generated",
		"x.pyc":                  "bytecode",
		".git/config":            "[remote \"origin\"]\n\turl = https://user:TOKEN@example.com/r.git\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/logs/HEAD":         "reflog",
		"drop/me.txt":            "excluded by the caller",
		"Dir With Space/ü n.txt": "unicode",
	})
	os.MkdirAll(filepath.Join(work, "empty"), 0o755)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link.txt"))
	os.Symlink(outside, filepath.Join(work, "linkdir"))

	status, h, body := ts.send("GET", "/api/file/archive?format=tar.gz&exclude=drop&path="+url.QueryEscape(work), nil)
	if status != 200 || h.Get("Content-Type") != "application/gzip" || !strings.Contains(h.Get("Content-Disposition"), `filename=work.tar.gz`) {
		t.Fatalf("archive: %d %v %.200s", status, h, body)
	}
	if bytes.Contains(body, []byte("SECRET")) || bytes.Contains(body, []byte("TOKEN")) {
		t.Fatal("the archive holds what lies outside the tree, or a credential")
	}
	dst := t.TempDir()
	tgz := filepath.Join(dst, "a.tar.gz")
	os.WriteFile(tgz, body, 0o644)
	mustRun(t, dst, "tar", "-xzf", tgz)
	manifest, err := os.ReadFile(filepath.Join(dst, "work", "archive_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dst, "work", "archive_manifest.json"))
	got := listTree(t, filepath.Join(dst, "work"))
	want := map[string]string{
		"a.txt": "alpha\n", "sub/": "", "sub/b.txt": "beta\n", "sub/deep/": "", "sub/deep/c.bin": "\x00\x01\x02",
		"keep/": "", "keep/build": "a file named like an excluded directory", "empty/": "",
		"Dir With Space/": "", "Dir With Space/ü n.txt": "unicode",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("extracted\n%v\nwant\n%v", got, want)
	}
	for _, m := range []string{`"file_count": 5`, `"format": "tar.gz"`, `"source": "work"`, `"drop"`} {
		if !strings.Contains(string(manifest), m) {
			t.Errorf("manifest lacks %s: %s", m, manifest)
		}
	}

	// A full capture keeps the generated directories and .git, but not its
	// credentials nor reflogs.
	status, _, body = ts.send("GET", "/api/file/archive?format=tar.gz&use_default_excludes=false&path="+url.QueryEscape(work), nil)
	if status != 200 {
		t.Fatalf("full capture: %d %s", status, body)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "a.tar.gz"), body, 0o644)
	mustRun(t, full, "tar", "-xzf", "a.tar.gz")
	got = listTree(t, filepath.Join(full, "work"))
	for _, p := range []string{"node_modules/x/i.js", "build/out.o", "x.pyc", ".git/HEAD", "drop/me.txt"} {
		if _, ok := got[p]; !ok {
			t.Errorf("full capture lacks %s", p)
		}
	}
	for _, p := range []string{".git/config", ".git/logs/HEAD", "link.txt", "linkdir/", "linkdir/secret.txt"} {
		if _, ok := got[p]; ok {
			t.Errorf("full capture holds %s", p)
		}
	}
}

// TestArchiveGitDelta: the patch, applied by git to a clone of the base
// commit, gives the working tree (modified, added, deleted and binary
// files), without the excluded parts; the repository's own index is
// untouched; a workspace holding one repository is archived as it.
func TestArchiveGitDelta(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	base := t.TempDir()
	repo := filepath.Join(base, "ws", "project")
	writeTree(t, repo, map[string]string{"keep.txt": "one\n", "gone.txt": "bye\n", "dir/x.txt": "x\n"})
	mustRun(t, repo, "git", "init", "-q", "-b", "main")
	mustRun(t, repo, "git", "add", ".")
	mustRun(t, repo, "git", "commit", "-qm", "base")
	head := strings.TrimSpace(mustRun(t, repo, "git", "rev-parse", "HEAD"))
	writeTree(t, repo, map[string]string{"keep.txt": "two\n", "new/added.txt": "added\n", "node_modules/m.js": "dep", "bin.dat": "\x00\xff\x00binary"})
	os.Remove(filepath.Join(repo, "gone.txt"))
	indexBefore, _ := os.ReadFile(filepath.Join(repo, ".git", "index"))

	// The workspace holds the one repository: it is what is archived.
	status, h, patch := ts.send("GET", "/api/file/archive?path="+url.QueryEscape(filepath.Join(base, "ws")), nil)
	if status != 200 || h.Get("Content-Type") != "text/x-patch" {
		t.Fatalf("git-delta: %d %v %s", status, h, patch)
	}
	if h.Get("X-Archive-Base-Commit") != head || h.Get("X-Archive-Base-Ref") != "auto" || h.Get("X-Archive-Head-Commit") != head || h.Get("X-Archive-Branch") != "main" || h.Get("X-Archive-Repo-Root") != url.PathEscape(repo) {
		t.Errorf("headers %v", h)
	}
	if idx, _ := os.ReadFile(filepath.Join(repo, ".git", "index")); !bytes.Equal(idx, indexBefore) {
		t.Error("the repository's index changed")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	mustRun(t, base, "git", "clone", "-q", repo, clone)
	mustRun(t, clone, "git", "checkout", "-q", head)
	os.WriteFile(filepath.Join(clone, "..", "p.patch"), patch, 0o644)
	mustRun(t, clone, "git", "apply", "--binary", "../p.patch")
	got, want := listTree(t, clone), listTree(t, repo)
	for _, m := range []map[string]string{got, want} {
		for k := range m {
			if strings.HasPrefix(k, ".git/") || strings.HasPrefix(k, "node_modules/") {
				delete(m, k)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("applied patch gives\n%v\nwant\n%v", got, want)
	}

	// A base ref of its own; one that does not resolve; an option.
	if status, _, body := ts.send("GET", "/api/file/archive?base_ref=nope&path="+url.QueryEscape(repo), nil); status != 400 || !strings.Contains(string(body), "could not be resolved") {
		t.Errorf("unknown base_ref: %d %s", status, body)
	}
	if status, _, body := ts.send("GET", "/api/file/archive?base_ref=--output=/tmp/x&path="+url.QueryEscape(repo), nil); status != 400 {
		t.Errorf("base_ref as an option: %d %s", status, body)
	}
	if status, h, _ := ts.send("GET", "/api/file/archive?base_ref=HEAD&path="+url.QueryEscape(repo), nil); status != 200 || h.Get("X-Archive-Base-Ref") != "HEAD" {
		t.Errorf("base_ref HEAD: %d %v", status, h)
	}
	// Not a repository.
	plain := t.TempDir()
	if status, _, body := ts.send("GET", "/api/file/archive?path="+url.QueryEscape(plain), nil); status != 400 || !strings.Contains(string(body), "Not a git repository") {
		t.Errorf("not a repository: %d %s", status, body)
	}
}

// TestArchiveRefusals: the reference's answers to a bad path, and the
// runtime-scoped twin keeps the path inside the conversation's
// workspace, through ".." or a symbolic link alike.
func TestArchiveRefusals(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f.txt": "f"})
	for _, c := range []struct {
		query  string
		status int
	}{
		{"path=relative/dir", 400},
		{"path=" + url.QueryEscape(filepath.Join(dir, "missing")), 404},
		{"path=" + url.QueryEscape(filepath.Join(dir, "f.txt")), 400},
		{"", 422},
		{"format=zip&path=" + url.QueryEscape(dir), 422},
	} {
		if status, _, body := ts.send("GET", "/api/file/archive?"+c.query, nil); status != c.status {
			t.Errorf("?%s: %d %s, want %d", c.query, status, body, c.status)
		}
	}

	ws := filepath.Join(t.TempDir(), "ws")
	writeTree(t, ws, map[string]string{"in/a.txt": "a"})
	os.Symlink(dir, filepath.Join(ws, "escape"))
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": ws}}), &info)
	prefix := "/api/conversations/" + info["id"].(string) + "/file/archive?format=tar.gz&path="
	if status, _, body := ts.send("GET", prefix+url.QueryEscape(filepath.Join(ws, "in")), nil); status != 200 || len(body) == 0 {
		t.Errorf("inside the workspace: %d", status)
	}
	for _, p := range []string{dir, filepath.Join(ws, "..", filepath.Base(dir)), filepath.Join(ws, "in", "..", ".."), filepath.Join(ws, "escape")} {
		if status, _, body := ts.send("GET", prefix+url.QueryEscape(p), nil); status != 422 {
			t.Errorf("%s: %d %.200s, want 422", p, status, body)
		}
	}
	if status, _, _ := ts.send("GET", "/api/conversations/"+unknownID+"/file/archive?path="+url.QueryEscape(ws), nil); status != 404 {
		t.Errorf("unknown conversation: %d", status)
	}
}

// TestArchiveBounded: archiving 48 MB of incompressible files allocates a
// small fraction of it (the archive is streamed, not built in memory).
func TestArchiveBounded(t *testing.T) {
	// Not parallel: it measures this process's allocations.
	dir := t.TempDir()
	makeTree(t, dir, 48<<20, 1<<20)
	srv, err := server.New(&server.Options{ConversationsPath: t.TempDir(), WorkspacePath: dir, BashEventsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cw := &countWriter{}
	srv.ServeHTTP(cw, mustRequest(t, "/api/file/archive?format=tar.gz&path="+url.QueryEscape(dir)))
	runtime.ReadMemStats(&after)
	if cw.status != 200 || cw.n < 48<<20 {
		t.Fatalf("archive: %d, %d bytes", cw.status, cw.n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 12<<20 {
		t.Errorf("archiving 48 MB allocated %d bytes", alloc)
	}
}

func mustRequest(t testing.TB, path string) *http.Request {
	req, err := http.NewRequest("GET", "http://127.0.0.1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// countWriter is a ResponseWriter that keeps nothing but the count.
type countWriter struct {
	h      http.Header
	status int
	n      int64
}

func (c *countWriter) Header() http.Header {
	if c.h == nil {
		c.h = http.Header{}
	}
	return c.h
}

func (c *countWriter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.WriteHeader(200)
	c.n += int64(len(p))
	return len(p), nil
}

// makeTree writes size bytes of random data under dir in files of
// fileSize, 64 to a directory, through one buffer.
func makeTree(t testing.TB, dir string, size, fileSize int64) {
	t.Helper()
	buf := make([]byte, fileSize)
	rand.Read(buf)
	for i := int64(0); i*fileSize < size; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/64))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		buf[0], buf[1] = byte(i), byte(i>>8) // no two files alike
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.bin", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
