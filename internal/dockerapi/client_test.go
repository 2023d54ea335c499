package dockerapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEngine serves h on a unix socket, as the engine does, and returns a
// client of it. It checks the protocol's half that is ours (paths, query,
// bodies, error and stream decoding); engine_test.go runs the same calls
// against a real engine.
func fakeEngine(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// frame is one frame of the engine's multiplexed stream.
func frame(stream byte, s string) []byte {
	h := make([]byte, 8, 8+len(s))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(s)))
	return append(h, s...)
}

func TestNewHosts(t *testing.T) {
	for _, tc := range []struct {
		host, err string
	}{
		{host: "unix:///var/run/docker.sock"},
		{host: "tcp://127.0.0.1:2375"},
		{host: "http://127.0.0.1:2375"},
		{host: "ssh://me@host", err: "only unix:// and tcp://"},
		{host: "npipe:////./pipe/docker_engine", err: "only unix:// and tcp://"},
		{host: "::bad", err: "bad host"},
	} {
		c, err := New(tc.host)
		if tc.err == "" {
			if err != nil {
				t.Errorf("New(%q): %v", tc.host, err)
				continue
			}
			if c.Host() != tc.host {
				t.Errorf("New(%q).Host() = %q", tc.host, c.Host())
			}
			c.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("New(%q) = %v, want an error with %q", tc.host, err, tc.err)
		}
	}
}

func TestNewDefaultsToDockerHost(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	c, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Host() != "tcp://127.0.0.1:1" {
		t.Errorf("Host() = %q, want $DOCKER_HOST", c.Host())
	}
	t.Setenv("DOCKER_HOST", "")
	c2, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.Host() != DefaultHost {
		t.Errorf("Host() = %q, want %q", c2.Host(), DefaultHost)
	}
}

func TestErrors(t *testing.T) {
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v" + APIVersion + "/images/missing/json":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"No such image: missing"}`)
		case "/v" + APIVersion + "/containers/create":
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, "name in use\n")
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	ctx := t.Context()
	_, err := c.ImageInspect(ctx, "missing")
	if !IsNotFound(err) || IsConflict(err) {
		t.Errorf("ImageInspect: %v, want a not-found error", err)
	}
	if err == nil || err.Error() != "docker: No such image: missing (HTTP 404)" {
		t.Errorf("ImageInspect error = %q", err)
	}
	_, err = c.ContainerCreate(ctx, "x", &ContainerConfig{Image: "i"})
	var e *Error
	if !IsConflict(err) || !errors.As(err, &e) || e.Message != "name in use" {
		t.Errorf("ContainerCreate: %#v, want a conflict with the plain-text message", err)
	}
	if err := c.Ping(ctx); err == nil || IsNotFound(err) {
		t.Errorf("Ping on a 500: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	c, err := New("unix://" + filepath.Join(t.TempDir(), "none.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Ping(t.Context())
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "none.sock") {
		t.Errorf("Ping = %v, want an error naming the engine's address", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := c.ContainerAttach(t.Context(), "x"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("ContainerAttach = %v, want unreachable", err)
	}
}

func TestCreateSendsConfig(t *testing.T) {
	var got ContainerConfig
	var name string
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("create: %s with %q", r.Method, r.Header.Get("Content-Type"))
		}
		name = r.URL.Query().Get("name")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		io.WriteString(w, `{"Id":"abc123","Warnings":[]}`)
	})
	init := true
	id, err := c.ContainerCreate(t.Context(), "box", &ContainerConfig{
		Image: "img", Cmd: []string{"sh", "-c", "true"}, Labels: map[string]string{"a": "b"},
		HostConfig: &HostConfig{Init: &init, Binds: []string{"/h:/c"}},
	})
	if err != nil || id != "abc123" {
		t.Fatalf("ContainerCreate = %q, %v", id, err)
	}
	if name != "box" || got.Image != "img" || got.Labels["a"] != "b" || got.HostConfig == nil ||
		got.HostConfig.Init == nil || !*got.HostConfig.Init || got.HostConfig.Binds[0] != "/h:/c" {
		t.Errorf("the engine got name %q, config %+v", name, got)
	}
}

func TestRemoveToleratesGoneAndInProgress(t *testing.T) {
	status, body := 0, ""
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("force") != "1" || q.Get("v") != "1" || r.Method != http.MethodDelete {
			t.Errorf("remove: %s %s", r.Method, r.URL)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
	for _, tc := range []struct {
		status  int
		body    string
		wantErr bool
	}{
		{http.StatusNoContent, "", false},
		{http.StatusNotFound, `{"message":"No such container: x"}`, false},
		{http.StatusConflict, `{"message":"removal of container x is already in progress"}`, false},
		{http.StatusConflict, `{"message":"You cannot remove a running container"}`, true},
		{http.StatusInternalServerError, `{"message":"driver failed"}`, true},
	} {
		status, body = tc.status, tc.body
		if err := c.ContainerRemove(t.Context(), "x"); (err != nil) != tc.wantErr {
			t.Errorf("ContainerRemove on %d %s: %v", tc.status, tc.body, err)
		}
	}
}

func TestStopAndKillQuery(t *testing.T) {
	var got []string
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := t.Context()
	for _, err := range []error{
		c.ContainerStop(ctx, "a", 1500*1e6), // 1.5 s rounds up to 2
		c.ContainerKill(ctx, "a", ""),
		c.ContainerKill(ctx, "a", "SIGTERM"),
		c.ContainerPause(ctx, "a"),
		c.ContainerUnpause(ctx, "a"),
		c.ContainerStart(ctx, "a"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	p := "/v" + APIVersion + "/containers/a/"
	want := []string{
		"POST " + p + "stop?t=2", "POST " + p + "kill?", "POST " + p + "kill?signal=SIGTERM",
		"POST " + p + "pause?", "POST " + p + "unpause?", "POST " + p + "start?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestListFilters(t *testing.T) {
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var f map[string][]string
		if err := json.Unmarshal([]byte(q.Get("filters")), &f); err != nil {
			t.Errorf("filters %q: %v", q.Get("filters"), err)
		}
		if q.Get("all") != "1" || strings.Join(f["label"], ",") != "a=b,c" {
			t.Errorf("list query %q", r.URL.RawQuery)
		}
		io.WriteString(w, `[{"Id":"1","Names":["/x"],"Labels":{"a":"b","c":""},"State":"running"}]`)
	})
	l, err := c.ContainerList(t.Context(), true, "a=b", "c")
	if err != nil || len(l) != 1 || l[0].ID != "1" {
		t.Fatalf("ContainerList = %+v, %v", l, err)
	}
}

func TestLogsDemux(t *testing.T) {
	raw := false
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("tail") != "5" {
			t.Errorf("logs query %q", r.URL.RawQuery)
		}
		if raw {
			w.Header().Set("Content-Type", "application/vnd.docker.raw-stream")
			io.WriteString(w, "out\nerr\n")
			return
		}
		w.Header().Set("Content-Type", "application/vnd.docker.multiplexed-stream")
		w.Write(frame(1, "out\n"))
		w.Write(frame(2, "err\n"))
		w.Write(frame(1, "more")[:10]) // a torn last frame ends the stream, not the call
	})
	for _, raw = range []bool{false, true} {
		got, err := c.ContainerLogs(t.Context(), "a", 5)
		if err != nil || !strings.HasPrefix(got, "out\nerr\n") {
			t.Errorf("raw %v: ContainerLogs = %q, %v", raw, got, err)
		}
	}
}

func TestMemoryExcludesCache(t *testing.T) {
	body := ""
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("stream") != "false" {
			t.Errorf("stats query %q", r.URL.RawQuery)
		}
		io.WriteString(w, body)
	})
	for _, tc := range []struct {
		body string
		want uint64
	}{
		{`{"memory_stats":{"usage":1000,"stats":{"total_inactive_file":300}}}`, 700}, // cgroup v1
		{`{"memory_stats":{"usage":1000,"stats":{"inactive_file":100}}}`, 900},       // cgroup v2
		{`{"memory_stats":{"usage":1000,"stats":{}}}`, 1000},
		{`{"memory_stats":{"usage":10,"stats":{"inactive_file":100}}}`, 10}, // never below zero
	} {
		body = tc.body
		got, err := c.ContainerMemory(t.Context(), "a")
		if err != nil || got != tc.want {
			t.Errorf("%s: ContainerMemory = %d, %v; want %d", tc.body, got, err, tc.want)
		}
	}
}

func TestWaitReportsEngineError(t *testing.T) {
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("condition") != "next-exit" {
			t.Errorf("wait query %q", r.URL.RawQuery)
		}
		io.WriteString(w, `{"StatusCode":137,"Error":{"Message":"oom"}}`)
	})
	ch, err := c.ContainerWait(t.Context(), "a", "next-exit")
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.StatusCode != 137 || r.Err == nil || !strings.Contains(r.Err.Error(), "oom") {
		t.Errorf("wait result %+v", r)
	}
}

func TestAttachHijacks(t *testing.T) {
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "tcp" || r.URL.Query().Get("stdin") != "1" {
			t.Errorf("attach request %s %v", r.URL, r.Header)
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		io.WriteString(rw, "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
		rw.Flush()
		// Echo stdin back as stdout frames and a line on stderr, until stdin ends.
		in, _ := io.ReadAll(rw)
		conn.Write(frame(1, string(in)))
		conn.Write(frame(2, "bye\n"))
	})
	a, err := c.ContainerAttach(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := a.OutputTo(&out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\n" || errb.String() != "bye\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

func TestAttachRefused(t *testing.T) {
	c := fakeEngine(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "No such container: a\n")
	})
	_, err := c.ContainerAttach(t.Context(), "a")
	if !IsNotFound(err) {
		t.Errorf("ContainerAttach = %v, want not found", err)
	}
}
