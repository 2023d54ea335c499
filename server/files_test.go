package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gohands/gohands/server"
)

// hangGuard is a client whose timeout only stops a test that would hang.
var hangGuard = &http.Client{Timeout: time.Minute}

func getStatus(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := hangGuard.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v (a read that never returns?)", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestSpecialFilesRefused checks that a FIFO (which blocks its opener
// until a writer comes) and a device are refused at once by the routes
// that read files, instead of pinning a server thread.
func TestSpecialFilesRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	fifo := filepath.Join(repo, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", repo} {
		for _, route := range []string{"/api/file/download", "/api/git/diff"} {
			if route == "/api/git/diff" && p != fifo { // outside a repository a diff reads nothing
				continue
			}
			status, body := getStatus(t, ts.http.URL+route+"?path="+url.QueryEscape(p))
			if status != http.StatusBadRequest || !strings.Contains(body, "not a regular file") && !strings.Contains(body, "not a file") {
				t.Errorf("%s of %s: %d %s, want 400 naming a special file", route, p, status, body)
			}
		}
	}
}

// TestDiffBounded checks that a diff of a file over the limit is refused
// without reading it: a 100 MB file costs the server next to no memory.
func TestDiffBounded(t *testing.T) {
	// Not parallel: it measures this process's allocations.
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	small := filepath.Join(repo, "small.txt")
	os.WriteFile(small, []byte("one\n"), 0o644)
	big := filepath.Join(repo, "big.bin")
	os.WriteFile(big, bytes.Repeat([]byte("x"), 2<<20), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "base")
	// The committed big file shrinks: the original side is over the limit.
	os.WriteFile(big, []byte("small now\n"), 0o644)
	huge := filepath.Join(repo, "huge.bin")
	f, _ := os.Create(huge)
	f.Truncate(100 << 20) // sparse
	f.Close()

	srv, err := server.New(&server.Options{ConversationsPath: t.TempDir(), WorkspacePath: repo, BashEventsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	diff := func(p string) (int, string, uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/api/git/diff?path="+url.QueryEscape(p), nil))
		runtime.ReadMemStats(&after)
		return w.Code, w.Body.String(), after.TotalAlloc - before.TotalAlloc
	}
	if code, body, _ := diff(small); code != 200 || !strings.Contains(body, `"modified":"one"`) {
		t.Errorf("small file: %d %s", code, body)
	}
	for _, p := range []string{huge, big} {
		code, body, alloc := diff(p)
		if code != http.StatusBadRequest || !strings.Contains(body, "too large") {
			t.Errorf("%s: %d %s, want 400 too large", filepath.Base(p), code, body)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: the refused diff allocated %d bytes", filepath.Base(p), alloc)
		}
	}
}

// TestUploadLeavesNoTemp checks that a failed upload leaves no temporary
// file and answers with the caller's mistake, not a server error.
func TestUploadLeavesNoTemp(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	upload := func(target string, body io.Reader, ctype string) (int, string) {
		req, _ := http.NewRequest("POST", ts.http.URL+"/api/file/upload?path="+url.QueryEscape(target), body)
		req.Header.Set("Content-Type", ctype)
		resp, err := hangGuard.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	form := func(content string) (*bytes.Buffer, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", "x")
		fw.Write([]byte(content))
		mw.Close()
		return &b, mw.FormDataContentType()
	}
	// Onto a directory: refused with 400 before anything is written.
	b, ct := form("data")
	if status, body := upload(filepath.Join(dir, "sub"), b, ct); status != http.StatusBadRequest {
		t.Errorf("upload onto a directory: %d %s", status, body)
	}
	// A body cut in the middle: the request fails, nothing is kept.
	b, ct = form(strings.Repeat("y", 1<<20))
	cut := io.LimitReader(b, int64(b.Len()/2))
	status, body := upload(filepath.Join(dir, "cut"), cut, ct)
	if status != http.StatusBadRequest {
		t.Errorf("a cut upload: %d %s, want 400 (the caller's body, not a server error)", status, body)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "sub" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// FuzzFilePaths sends download and diff requests for paths under a
// directory holding a file, a directory, a FIFO, a symlink to each and a
// dangling one: whatever the path (traversal, NUL, odd bytes), the answer
// is a clear 4xx or the file, never a 5xx and never a read that blocks.
func FuzzFilePaths(f *testing.F) {
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), []byte("content"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		f.Fatal(err)
	}
	for _, l := range [][2]string{{"file", "to-file"}, {"fifo", "to-fifo"}, {"sub", "to-sub"}, {"nowhere", "dangling"}} {
		os.Symlink(filepath.Join(dir, l[0]), filepath.Join(dir, l[1]))
	}
	for _, s := range []string{"file", "to-file", "fifo", "to-fifo", "sub", "to-sub", "dangling", "../" + filepath.Base(dir) + "/fifo",
		"sub/../fifo", "file\x00", "%2e%2e/fifo", "", ".", "file/", "to-fifo/.", strings.Repeat("a/", 200)} {
		f.Add(s)
	}
	srv, err := server.New(&server.Options{ConversationsPath: f.TempDir(), WorkspacePath: dir, BashEventsDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		p := filepath.Join(dir, rel)
		if !strings.HasPrefix(p, dir) {
			return // outside the fixture: not this test's files
		}
		for _, route := range []string{"/api/file/download", "/api/git/diff"} {
			w := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				defer close(done)
				srv.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+route+"?path="+url.QueryEscape(p), nil))
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang guard: a blocked read
				t.Fatalf("%s %q does not answer", route, p)
			}
			if w.Code >= 500 {
				t.Errorf("%s %q: %d %s", route, p, w.Code, w.Body.String())
			}
			if route == "/api/file/download" && w.Code == 200 && w.Body.String() != "content" {
				t.Errorf("download %q served %q", p, w.Body.String())
			}
		}
	})
}

// FuzzUploadPaths uploads to paths under a fresh directory holding a
// file, a directory, a FIFO, a symlink to each and a dangling one. The
// routes take any absolute path, as the reference's do (the key, or the
// same-origin guard, is what keeps callers out), so the property is
// consistency, not confinement: the answer is a 4xx or 200, never a 5xx
// nor a blocked write; a 200 leaves the new content readable at the path
// and through download; a refusal changes nothing; and no temporary file
// outlives the request.
func FuzzUploadPaths(f *testing.F) {
	for _, s := range []string{"new", "file", "to-file", "fifo", "to-fifo", "sub", "to-sub", "dangling", "sub/new", "to-sub/new",
		"deep/er/new", "file/x", "fifo/x", "sub/../fifo", "file\x00", "%2e%2e/x", "", ".", "file/", "new/", "to-fifo/.",
		".upload-x", strings.Repeat("a/", 200) + "x", strings.Repeat("n", 300), "deep/er/" + strings.Repeat("n", 300)} {
		f.Add(s)
	}
	srv, err := server.New(&server.Options{ConversationsPath: f.TempDir(), WorkspacePath: f.TempDir(), BashEventsDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "file"), []byte("content"), 0o644)
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, l := range [][2]string{{"file", "to-file"}, {"fifo", "to-fifo"}, {"sub", "to-sub"}, {"nowhere", "dangling"}} {
			os.Symlink(filepath.Join(dir, l[0]), filepath.Join(dir, l[1]))
		}
		snapshot := func() map[string]string {
			m := map[string]string{}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || p == dir {
					return nil
				}
				fi, _ := d.Info()
				v := fi.Mode().Type().String()
				if fi.Mode().IsRegular() {
					b, _ := os.ReadFile(p)
					v += string(b)
				}
				if fi.Mode()&os.ModeSymlink != 0 {
					target, _ := os.Readlink(p)
					v += target
				}
				m[strings.TrimPrefix(p, dir)] = v
				return nil
			})
			return m
		}
		before := snapshot()
		p := dir + "/" + rel
		if !strings.HasPrefix(filepath.Clean(p), dir+"/") {
			return // outside the fixture: not this test's files
		}

		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "x")
		fw.Write([]byte("uploaded"))
		mw.Close()
		req := httptest.NewRequest("POST", "http://127.0.0.1/api/file/upload?path="+url.QueryEscape(p), &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.ServeHTTP(w, req)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // a hang guard: a blocked write
			t.Fatalf("upload %q does not answer", p)
		}

		after := snapshot()
		for name := range after {
			if strings.Contains(filepath.Base(name), ".upload-") && name != "/.upload-x" {
				t.Errorf("upload %q (%d) left %s behind", p, w.Code, name)
			}
		}
		switch {
		case w.Code >= 500:
			t.Errorf("upload %q: %d %s", p, w.Code, w.Body.String())
		case w.Code == http.StatusOK:
			if b, err := os.ReadFile(p); err != nil || string(b) != "uploaded" {
				t.Errorf("upload %q answered 200 but the path reads %q, %v", p, b, err)
			}
			var res struct {
				Success  bool  `json:"success"`
				FileSize int64 `json:"file_size"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || !res.Success || res.FileSize != int64(len("uploaded")) {
				t.Errorf("upload %q answered %s, want success and file_size %d (%v)", p, w.Body.String(), len("uploaded"), err)
			}
			dw := httptest.NewRecorder()
			srv.ServeHTTP(dw, httptest.NewRequest("GET", "http://127.0.0.1/api/file/download?path="+url.QueryEscape(p), nil))
			if dw.Code != http.StatusOK || dw.Body.String() != "uploaded" {
				t.Errorf("download after upload %q: %d %q", p, dw.Code, dw.Body.String())
			}
		default:
			for name, v := range before {
				if after[name] != v {
					t.Errorf("refused upload %q (%d %s) changed %s: %q -> %q", p, w.Code, w.Body.String(), name, v, after[name])
				}
			}
			if len(after) != len(before) {
				t.Errorf("refused upload %q (%d %s) left %d entries, had %d", p, w.Code, w.Body.String(), len(after), len(before))
			}
		}
	})
}
