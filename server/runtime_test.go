package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// runtimeFixture is a server holding one conversation whose workspace has
// a file, a directory, and symlinks out of it (to a file outside and a
// dangling one pointing outside).
type runtimeFixture struct {
	ts      *testServer
	id      string
	work    string
	outside string
}

func newRuntimeFixture(t testing.TB) *runtimeFixture {
	t.Helper()
	ts := newTestServer(t, nil)
	model := llmtest.NewChat(t)
	work, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "in.txt"), []byte("inside"), 0o644)
	os.Mkdir(filepath.Join(work, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "to-secret"))
	os.Symlink(outside, filepath.Join(work, "to-outside"))
	os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(work, "dangling-out"))
	body := ts.startBody(model, nil)
	body["workspace"] = map[string]any{"working_dir": work, "kind": "LocalWorkspace"}
	var info struct {
		ID string `json:"id"`
	}
	ts.must(201, "POST", "/api/conversations", body, &info)
	return &runtimeFixture{ts: ts, id: info.ID, work: work, outside: outside}
}

// TestRuntimeRoutesConfined: the runtime-scoped file and git routes act
// only on paths inside the conversation's workspace once symlinks are
// resolved; the way out (.., a link to a file or directory outside, a
// dangling link pointing outside, a relative path) answers 422 with the
// reference's detail and reads or writes nothing.
func TestRuntimeRoutesConfined(t *testing.T) {
	t.Parallel()
	f := newRuntimeFixture(t)
	base := "/api/conversations/" + f.id
	// Inside: served.
	if st, body := f.ts.do("GET", base+"/file/download?path="+url.QueryEscape(filepath.Join(f.work, "in.txt")), nil); st != 200 || string(body) != "inside" {
		t.Errorf("download inside: %d %s", st, body)
	}
	for _, p := range []string{
		filepath.Join(f.work, "..", filepath.Base(f.outside), "secret.txt"),
		filepath.Join(f.work, "to-secret"),
		filepath.Join(f.work, "to-outside", "secret.txt"),
		filepath.Join(f.work, "sub", "..", "..", "x"),
		"in.txt",
		filepath.Join(f.outside, "secret.txt"),
	} {
		st, body := f.ts.do("GET", base+"/file/download?path="+url.QueryEscape(p), nil)
		if st != 422 || !strings.Contains(string(body), "path must be inside the conversation workspace") {
			t.Errorf("download %s: %d %s, want 422", p, st, body)
		}
	}
	// Writes through a dangling link pointing outside are refused too, and
	// leave nothing there.
	st, body := f.ts.do("POST", base+"/file/create_directory?path="+url.QueryEscape(filepath.Join(f.work, "to-outside", "made")), nil)
	if st != 422 {
		t.Errorf("create_directory through a link out: %d %s", st, body)
	}
	if _, err := os.Stat(filepath.Join(f.outside, "made")); err == nil {
		t.Error("a directory was made outside the workspace")
	}
	st, body = f.ts.do("GET", base+"/git/changes?path="+url.QueryEscape(filepath.Join(f.work, "dangling-out")), nil)
	if st != 422 {
		t.Errorf("git changes through a dangling link out: %d %s", st, body)
	}
	// Inside, the server-level route answers.
	st, body = f.ts.do("POST", base+"/file/create_directory?path="+url.QueryEscape(filepath.Join(f.work, "made", "deep")), nil)
	if st != 200 {
		t.Errorf("create_directory inside: %d %s", st, body)
	}
	if fi, err := os.Stat(filepath.Join(f.work, "made", "deep")); err != nil || !fi.IsDir() {
		t.Errorf("create_directory inside made nothing: %v", err)
	}
}

// TestRuntimeRoutesConversation: an unknown conversation answers 404, a
// malformed id 422, a trajectory of another conversation 422.
func TestRuntimeRoutesConversation(t *testing.T) {
	t.Parallel()
	f := newRuntimeFixture(t)
	for _, c := range []struct {
		method, path string
		want         int
		detail       string
	}{
		{"GET", "/api/conversations/00000000-0000-4000-8000-000000000000/bash/bash_events/search", 404, `"Conversation not found"`},
		{"GET", "/api/conversations/not-a-uuid/bash/bash_events/search", 422, "uuid_parsing"},
		{"GET", "/api/conversations/" + f.id + "/bash/bash_events/search", 200, `"items"`},
		{"GET", "/api/conversations/" + f.id + "/file/download-trajectory/00000000-0000-4000-8000-000000000000", 422, "Trajectory must belong to the selected conversation"},
		{"GET", "/api/conversations/" + f.id + "/file/download-trajectory/zz", 422, "Invalid trajectory conversation id"},
	} {
		st, body := f.ts.do(c.method, c.path, nil)
		if st != c.want || !strings.Contains(string(body), c.detail) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, st, body, c.want, c.detail)
		}
	}
}

// TestBashStop: a running command stops on request and ends with its
// last output; stopping it again (finished) succeeds; an unknown id is
// 404, a malformed one 422.
func TestBashStop(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	var cmd struct {
		ID string `json:"id"`
	}
	ts.must(200, "POST", "/api/bash/start_bash_command", map[string]any{"command": "sleep 600", "timeout": 900}, &cmd)
	ts.must(200, "POST", "/api/bash/bash_commands/"+cmd.ID+"/stop", nil, nil)
	deadline := time.Now().Add(time.Minute)
	for {
		var page struct {
			Items []struct {
				ExitCode *int `json:"exit_code"`
			} `json:"items"`
		}
		ts.must(200, "GET", "/api/bash/bash_events/search?kind__eq=BashOutput&command_id__eq="+cmd.ID, nil, &page)
		if len(page.Items) > 0 && page.Items[len(page.Items)-1].ExitCode != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stopped command has not ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.must(200, "POST", "/api/bash/bash_commands/"+cmd.ID+"/stop", nil, nil)
	ts.must(404, "POST", "/api/bash/bash_commands/00000000-0000-4000-8000-000000000000/stop", nil, nil)
	ts.must(422, "POST", "/api/bash/bash_commands/zz/stop", nil, nil)

	// The batch get: the events by id, null for an unknown one.
	var got []json.RawMessage
	ts.must(200, "GET", "/api/bash/bash_events/", []string{cmd.ID, "nope"}, &got)
	if len(got) != 2 || !strings.Contains(string(got[0]), `"sleep 600"`) || string(got[1]) != "null" {
		t.Errorf("batch get: %s", got)
	}
	ts.must(422, "GET", "/api/bash/bash_events/", nil, nil)
}

// TestFileBrowser: home lists the home's directories; search_subdirs
// pages a directory's subdirectories, sorted case-insensitively, hidden
// and symlinked ones left out; create_directory is idempotent and refuses
// a file in the way.
func TestFileBrowser(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	for _, d := range []string{"b", "A", "c", ".hidden"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "b"), filepath.Join(dir, "link"))
	type page struct {
		Items []struct {
			Name, Path string
		} `json:"items"`
		NextPageID *string `json:"next_page_id"`
	}
	var p page
	ts.must(200, "GET", "/api/file/search_subdirs?limit=2&path="+url.QueryEscape(dir), nil, &p)
	if len(p.Items) != 2 || p.Items[0].Name != "A" || p.Items[1].Name != "b" || p.NextPageID == nil || *p.NextPageID != "c" {
		t.Fatalf("first page: %+v", p)
	}
	ts.must(200, "GET", "/api/file/search_subdirs?limit=2&page_id=c&path="+url.QueryEscape(dir), nil, &p)
	if len(p.Items) != 1 || p.Items[0].Path != filepath.Join(dir, "c") || p.NextPageID != nil {
		t.Fatalf("second page: %+v", p)
	}
	ts.must(200, "GET", "/api/file/search_subdirs?include_hidden=true&path="+url.QueryEscape(dir), nil, &p)
	if len(p.Items) != 4 {
		t.Errorf("with hidden: %+v", p)
	}
	ts.must(404, "GET", "/api/file/search_subdirs?path="+url.QueryEscape(filepath.Join(dir, "none")), nil, nil)
	ts.must(400, "GET", "/api/file/search_subdirs?path="+url.QueryEscape(filepath.Join(dir, "file")), nil, nil)
	ts.must(400, "GET", "/api/file/search_subdirs?path=relative", nil, nil)
	ts.must(422, "GET", "/api/file/search_subdirs", nil, nil)
	ts.must(422, "GET", "/api/file/search_subdirs?limit=0&path=/", nil, nil)

	var home struct {
		Home      string
		Favorites []struct{ Label, Path string }
		Locations []struct{ Label, Path string }
	}
	ts.must(200, "GET", "/api/file/home", nil, &home)
	if h, _ := os.UserHomeDir(); home.Home != h || len(home.Locations) != 1 || home.Locations[0].Path != "/" {
		t.Errorf("home: %+v", home)
	}

	made := filepath.Join(dir, "x", "y")
	ts.must(200, "POST", "/api/file/create_directory?path="+url.QueryEscape(made), nil, nil)
	ts.must(200, "POST", "/api/file/create_directory?path="+url.QueryEscape(made), nil, nil)
	ts.must(400, "POST", "/api/file/create_directory?path="+url.QueryEscape(filepath.Join(dir, "file")), nil, nil)
	ts.must(400, "POST", "/api/file/create_directory?path="+url.QueryEscape(filepath.Join(dir, "file", "under")), nil, nil)
	ts.must(400, "POST", "/api/file/create_directory?path=relative", nil, nil)
}

// FuzzRuntimePaths sends runtime-scoped downloads and directory creations
// for paths built from the fuzzed string inside a workspace holding
// symlinks out of it: whatever the path (.., links, NUL, odd bytes), a
// file outside the workspace is never served, nothing is made outside it,
// and the answer is never a 5xx.
func FuzzRuntimePaths(f *testing.F) {
	for _, s := range []string{"in.txt", "to-secret", "to-outside/secret.txt", "../x", "sub/../../x", "dangling-out", "to-outside/made",
		"sub/./in.txt", "in.txt\x00", "%2e%2e/x", "", ".", "//etc/passwd", strings.Repeat("../", 30) + "etc/passwd", "to-outside/../in.txt"} {
		f.Add(s)
	}
	fx := newRuntimeFixture(f)
	f.Fuzz(func(t *testing.T, rel string) {
		p := fx.work + "/" + rel
		base := "/api/conversations/" + fx.id
		st, body := fx.ts.on(t).do("GET", base+"/file/download?path="+url.QueryEscape(p), nil)
		if st >= 500 {
			t.Errorf("download %q: %d %s", p, st, body)
		}
		if st == 200 && string(body) != "inside" {
			t.Fatalf("download %q served %q", p, body)
		}
		st, body = fx.ts.on(t).do("POST", base+"/file/create_directory?path="+url.QueryEscape(p), nil)
		if st >= 500 {
			t.Errorf("create_directory %q: %d %s", p, st, body)
		}
		entries, _ := os.ReadDir(fx.outside)
		if len(entries) != 1 {
			t.Fatalf("create_directory %q made something outside the workspace: %v", p, entries)
		}
	})
}
