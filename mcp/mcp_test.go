package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"

	"golang.org/x/sys/unix"
)

func findTool(t testing.TB, set *Set, name string) tool.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name())
	}
	t.Fatalf("no tool %q among %v", name, names)
	return nil
}

// call runs a tool as the agent does: parse, then execute.
func call(t testing.TB, tl tool.Tool, args string) *Observation {
	t.Helper()
	a, err := tl.ParseAction(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: ParseAction(%s): %v", tl.Name(), args, err)
	}
	o, err := tl.Execute(context.Background(), a)
	if err != nil {
		t.Fatalf("%s: Execute: %v", tl.Name(), err)
	}
	return o.(*Observation)
}

func text(o *Observation) string {
	var b strings.Builder
	for _, c := range o.Content {
		if c.Type == event.ContentText {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// exercise runs the checks every transport must pass.
func exercise(t *testing.T, set *Set) {
	if len(set.Tools()) < 10 {
		t.Fatalf("only %d tools", len(set.Tools()))
	}

	echo := findTool(t, set, "echo")
	o := call(t, echo, `{"message": "hi there"}`)
	if o.IsError || o.ToolName != "echo" || text(o) != "[Tool 'echo' executed.]\nEcho: hi there\n" {
		t.Errorf("echo: %+v", o)
	}
	if d := echo.Definition(); d.Kind != ToolKind || d.ActionType != ActionKind || d.ObservationType != ObservationKind {
		t.Errorf("definition %+v", d)
	}
	if s := echo.InputSchema(); !slices.Equal(tool.RequiredOf(s), []string{"message"}) || tool.PropertiesOf(s)[0].Name != "message" {
		t.Errorf("echo schema %v", s)
	}

	o = call(t, findTool(t, set, "get-sum"), `{"a": 2, "b": 40}`)
	if o.IsError || !strings.Contains(text(o), "42") {
		t.Errorf("get-sum: %+v", o)
	}

	o = call(t, findTool(t, set, "get-tiny-image"), `{}`)
	var images int
	for _, c := range o.Content {
		if c.Type == event.ContentImage && strings.HasPrefix(c.ImageURLs[0], "data:image/png;base64,") {
			images++
		}
	}
	if o.IsError || images != 1 {
		t.Errorf("get-tiny-image: %d images in %+v", images, o)
	}

	o = call(t, findTool(t, set, "get-resource-reference"), `{"resourceType": "Text", "resourceId": 2}`)
	if o.IsError || !strings.Contains(text(o), "[Resource demo://resource/dynamic/text/2]") {
		t.Errorf("get-resource-reference: %s", text(o))
	}
	o = call(t, findTool(t, set, "get-resource-links"), `{"count": 2}`)
	if o.IsError || strings.Count(text(o), "[Resource link: demo://resource/") != 2 {
		t.Errorf("get-resource-links: %s", text(o))
	}

	// The server rejects the resource id: an error result.
	o = call(t, findTool(t, set, "get-resource-reference"), `{"resourceId": -1}`)
	if !o.IsError || !strings.Contains(text(o), "Invalid resourceId") {
		t.Errorf("erroring call: %+v", o)
	}
	// Arguments that do not fit the schema never reach the server.
	if _, err := echo.ParseAction(json.RawMessage(`{"message": 3}`)); err == nil || !strings.Contains(err.Error(), "message") {
		t.Errorf("bad argument accepted: %v", err)
	}
	if _, err := echo.ParseAction(json.RawMessage(`{}`)); err == nil {
		t.Error("missing required argument accepted")
	}
	// Nulls are dropped, as the reference does; order is kept.
	a, err := echo.ParseAction(json.RawMessage(`{"message": "x", "extra": null}`))
	if err != nil || string(a.(*Action).Data) != `{"message":"x"}` {
		t.Errorf("ParseAction with null: %s, %v", a, err)
	}
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	set := connect(t, Config{"everything": everythingStdio(t)}, nil)
	exercise(t, set)
}

func TestEverythingSSE(t *testing.T) {
	t.Parallel()
	base := startHTTPServer(t, "sse")
	set := connect(t, Config{"everything": {URL: base + "/sse"}}, nil) // transport inferred from /sse
	exercise(t, set)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	base := startHTTPServer(t, "streamableHttp")
	set := connect(t, Config{"everything": {URL: base + "/mcp", Transport: TransportStreamableHTTP}}, nil)
	exercise(t, set)
}

func TestAnnotations(t *testing.T) {
	t.Parallel()
	set := connect(t, Config{"everything": everythingStdio(t)}, nil)
	a := findTool(t, set, "get-env").Annotations()
	if a == nil || !a.ReadOnlyHint || a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint {
		t.Errorf("get-env annotations %+v", a)
	}
	if d := findTool(t, set, "get-env").Definition(); d.Title != "get-env" || d.Annotations == nil || !d.Annotations.ReadOnlyHint {
		t.Errorf("title %q", d.Title)
	}
	if !tool.ReadOnly(findTool(t, set, "get-env")) {
		t.Error("get-env not read-only")
	}
}

func TestStdioEnv(t *testing.T) {
	t.Setenv("GOHANDS_MCP_TEST_LEAK", "must-not-leak")
	srv := everythingStdio(t)
	srv.Env = map[string]secret.String{"MCP_TEST_VAR": secret.New("configured")}
	set := connect(t, Config{"everything": srv}, nil)
	out := text(call(t, findTool(t, set, "get-env"), `{}`))
	if !strings.Contains(out, `"MCP_TEST_VAR": "configured"`) || !strings.Contains(out, `"PATH"`) {
		t.Errorf("configured env missing: %s", out)
	}
	if strings.Contains(out, "must-not-leak") {
		t.Errorf("agent environment leaked to the server")
	}
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	srv := everythingStdio(t)
	srv.Timeout = 2 * time.Second
	set := connect(t, Config{"everything": srv}, nil)
	start := time.Now()
	o := call(t, findTool(t, set, "trigger-long-running-operation"), `{"duration": 30, "steps": 3}`)
	if !o.IsError || !strings.Contains(text(o), "timed out after 2s") {
		t.Errorf("long call: %+v", o)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("timeout not applied: took %v", time.Since(start))
	}
	// The server is still usable.
	if o := call(t, findTool(t, set, "echo"), `{"message": "after"}`); o.IsError {
		t.Errorf("echo after timeout: %+v", o)
	}
}

func TestCallerCancel(t *testing.T) {
	t.Parallel()
	set := connect(t, Config{"everything": everythingStdio(t)}, nil)
	tl := findTool(t, set, "trigger-long-running-operation")
	a, _ := tl.ParseAction(json.RawMessage(`{"duration": 30}`))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	o, err := tl.Execute(ctx, a)
	if err != nil || !o.Obs().IsError {
		t.Errorf("cancelled call: %+v, %v", o, err)
	}
}

// pidOf returns the pid of a stdio server's process.
func pidOf(t *testing.T, set *Set, name string) int {
	t.Helper()
	for _, s := range set.servers {
		if s.name == name {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.proc == nil || s.proc.cmd.Process == nil {
				t.Fatalf("server %q has no process", name)
			}
			return s.proc.cmd.Process.Pid
		}
	}
	t.Fatalf("no server %q", name)
	return 0
}

func TestServerKilledMidConversation(t *testing.T) {
	t.Parallel()
	set := connect(t, Config{"everything": everythingStdio(t)}, nil)
	echo := findTool(t, set, "echo")
	if o := call(t, echo, `{"message": "one"}`); o.IsError {
		t.Fatalf("first call: %+v", o)
	}
	pid := pidOf(t, set, "everything")
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := call(t, echo, `{"message": "two"}`)
	if !o.IsError || !strings.Contains(text(o), `MCP server "everything" disconnected`) || !strings.Contains(text(o), "restarted on the next call") {
		t.Errorf("call after kill: %s", text(o))
	}
	o = call(t, echo, `{"message": "three"}`)
	if o.IsError || !strings.Contains(text(o), "Echo: three") {
		t.Errorf("call after restart: %s", text(o))
	}
	if pid2 := pidOf(t, set, "everything"); pid2 == pid {
		t.Errorf("server not restarted (pid %d)", pid)
	}
}

func TestCloseStopsProcessGroup(t *testing.T) {
	t.Parallel()
	// A shell wrapper starts the server as a grandchild: Close must stop
	// both.
	script := serverScript(t, "server-everything")
	ctx := context.Background()
	set, err := Connect(ctx, Config{"wrapped": {Command: "sh", Args: []string{"-c", `node "$0" stdio; echo done`, script}}}, nil)
	if err != nil {
		set.Close()
		t.Fatal(err)
	}
	pid := pidOf(t, set, "wrapped")
	if o := call(t, findTool(t, set, "echo"), `{"message": "x"}`); o.IsError {
		t.Fatalf("echo: %+v", o)
	}
	if err := set.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Nothing is left in the server's process group.
	deadline := time.Now().Add(5 * time.Second)
	for unix.Kill(-pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	o := call(t, findTool(t, set, "echo"), `{"message": "x"}`)
	if !o.IsError {
		t.Errorf("call after Close: %+v", o)
	}
}

func TestFailingServerDoesNotStopOthers(t *testing.T) {
	t.Parallel()
	cfg := Config{
		"broken":     {Command: "node", Args: []string{"-e", "console.error('cannot start: missing API key'); process.exit(3)"}},
		"missing":    {Command: "/nonexistent/mcp-server"},
		"everything": everythingStdio(t),
	}
	set, err := Connect(context.Background(), cfg, nil)
	t.Cleanup(func() { set.Close() }) // a Set is usable, and must be closed, even with an error
	if err == nil {
		t.Fatal("no error for the broken servers")
	}
	var se *ServerError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *ServerError", err)
	}
	if !strings.Contains(err.Error(), `mcp server "broken"`) || !strings.Contains(err.Error(), "cannot start: missing API key") {
		t.Errorf("error does not explain the broken server: %v", err)
	}
	if !strings.Contains(err.Error(), `mcp server "missing"`) {
		t.Errorf("error does not name the missing server: %v", err)
	}
	if len(set.Errors()) != 2 || !slices.Equal(set.Servers(), []string{"everything"}) {
		t.Errorf("errors %v, servers %v", set.Errors(), set.Servers())
	}
	if o := call(t, findTool(t, set, "echo"), `{"message": "ok"}`); o.IsError {
		t.Errorf("echo: %+v", o)
	}
}

func TestDisabledServerNotStarted(t *testing.T) {
	t.Parallel()
	srv := everythingStdio(t)
	srv.Disabled = true
	set := connect(t, Config{"off": srv}, nil)
	if len(set.Tools()) != 0 || len(set.Servers()) != 0 {
		t.Errorf("disabled server connected: %v", set.Servers())
	}
}

func TestNameCollisions(t *testing.T) {
	t.Parallel()
	set := connect(t, Config{"a": everythingStdio(t), "b.x": everythingStdio(t)}, &Options{Reserved: []string{"finish"}})
	// Every tool exists on both servers: all are prefixed.
	names := map[string]bool{}
	for _, tl := range set.Tools() {
		if names[tl.Name()] {
			t.Errorf("duplicate name %q", tl.Name())
		}
		names[tl.Name()] = true
	}
	if !names["a_echo"] || !names["b_x_echo"] || names["echo"] {
		t.Errorf("names %v", names)
	}
	if err := tool.CheckNames(set.Tools()); err != nil {
		t.Error(err)
	}
	if len(set.Renamed()) != len(set.Tools()) {
		t.Errorf("%d renames for %d tools", len(set.Renamed()), len(set.Tools()))
	}
	if o := call(t, findTool(t, set, "b_x_echo"), `{"message": "m"}`); o.IsError || o.ToolName != "echo" {
		t.Errorf("renamed tool: %+v", o)
	}

	set2 := connect(t, Config{"ev": everythingStdio(t)}, &Options{Reserved: []string{"echo"}})
	if tl := findTool(t, set2, "ev_echo"); tl.(*Tool).MCPName() != "echo" {
		t.Errorf("renamed tool's MCP name %q", tl.(*Tool).MCPName())
	}
	if r := set2.Renamed(); len(r) != 1 || r[0] != (Rename{Server: "ev", Tool: "echo", NewName: "ev_echo"}) {
		t.Errorf("renamed %v", r)
	}
}

func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	script := serverScript(t, "server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello from go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := connect(t, Config{"fs": {Command: "node", Args: []string{script, dir}}}, nil)
	o := call(t, findTool(t, set, "read_text_file"), `{"path": "`+filepath.Join(dir, "in.txt")+`"}`)
	if o.IsError || !strings.Contains(text(o), "hello from go") {
		t.Errorf("read_text_file: %s", text(o))
	}
	out := filepath.Join(dir, "out.txt")
	o = call(t, findTool(t, set, "write_file"), `{"path": "`+out+`", "content": "written by mcp"}`)
	if o.IsError {
		t.Errorf("write_file: %s", text(o))
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "written by mcp" {
		t.Errorf("file: %q, %v", b, err)
	}
	// Outside the allowed directory: an error observation.
	o = call(t, findTool(t, set, "read_text_file"), `{"path": "/etc/hostname"}`)
	if !o.IsError || !strings.Contains(strings.ToLower(text(o)), "access denied") {
		t.Errorf("read outside: %+v", o)
	}
}

func TestObservationJSON(t *testing.T) {
	t.Parallel()
	o := &Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("x")}}, ToolName: "echo"}
	b, err := event.MarshalKinded(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"cache_prompt":false,"type":"text","text":"x"}],"is_error":false,"tool_name":"echo","kind":"MCPToolObservation"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	back, err := event.DecodeKinded[event.Observation](b)
	if err != nil || back.(*Observation).ToolName != "echo" {
		t.Errorf("decode: %+v, %v", back, err)
	}
	b, err = event.MarshalKinded(&Action{Data: json.RawMessage(`{"b":1,"a":2}`)})
	if err != nil || string(b) != `{"data":{"b":1,"a":2},"kind":"MCPToolAction"}` {
		t.Errorf("action: %s, %v", b, err)
	}
	b, _ = event.MarshalKinded(&Action{})
	if string(b) != `{"data":{},"kind":"MCPToolAction"}` {
		t.Errorf("empty action: %s", b)
	}
}

func TestConcurrentCalls(t *testing.T) {
	// Not parallel: it counts every child of the test process.
	set := connect(t, Config{"everything": everythingStdio(t)}, nil)
	echo := findTool(t, set, "echo")
	round := func() (errs int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 16 {
			wg.Go(func() {
				msg := fmt.Sprintf("m%d", i)
				o := call(t, echo, `{"message": "`+msg+`"}`)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case o.IsError:
					errs++
				case !strings.Contains(text(o), "Echo: "+msg):
					t.Errorf("call %d got %s", i, text(o))
				}
			})
		}
		wg.Wait()
		return errs
	}
	if n := round(); n != 0 {
		t.Fatalf("%d errors", n)
	}
	pid := pidOf(t, set, "everything")
	unix.Kill(pid, unix.SIGKILL)
	round() // some calls see the crash, the others reconnect
	if n := round(); n != 0 {
		t.Fatalf("%d errors after the restart", n)
	}
	// One server process, not one per racing call.
	if pid2 := pidOf(t, set, "everything"); pid2 == pid {
		t.Error("not restarted")
	}
	if left := childCount(); left != 1 {
		t.Errorf("%d child processes, want 1", left)
	}
}

// childCount counts the live (non-zombie) children of this process.
func childCount() int {
	me := strconv.Itoa(os.Getpid())
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == me && f[0] != "Z" {
			n++
		}
	}
	return n
}

func TestSecretsExpandedAndMasked(t *testing.T) {
	t.Parallel()
	opts := &Options{
		Secrets: func(name string) (string, bool) {
			if name == "API_TOKEN" {
				return "tok-123", true
			}
			return "", false
		},
		Mask: func(s string) string { return strings.ReplaceAll(s, "tok-123", "<secret-hidden>") },
	}
	set := connect(t, Config{"everything": everythingStdio(t)}, opts)
	echo := findTool(t, set, "echo")
	a, err := echo.ParseAction(json.RawMessage(`{"message": "token=${API_TOKEN} other=$OTHER"}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := echo.Execute(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	// The server saw the value (it echoes it back, masked for the model),
	// the action still holds the reference.
	if got := text(o.(*Observation)); !strings.Contains(got, "Echo: token=<secret-hidden> other=$OTHER") {
		t.Errorf("observation %q", got)
	}
	if string(a.(*Action).Data) != `{"message":"token=${API_TOKEN} other=$OTHER"}` {
		t.Errorf("action changed: %s", a.(*Action).Data)
	}
}

func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	// A program that never speaks MCP: Connect gives up and kills it.
	start := time.Now()
	set, err := Connect(context.Background(), Config{"silent": {Command: "sleep", Args: []string{"60"}}}, &Options{ConnectTimeout: time.Second})
	t.Cleanup(func() { set.Close() })
	if err == nil || !strings.Contains(err.Error(), `mcp server "silent"`) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Connect took %v", d)
	}
}

func TestRemoteHeadersAndAuth(t *testing.T) {
	t.Parallel()
	base := startHTTPServer(t, "streamableHttp")
	target, _ := url.Parse(base)
	var mu sync.Mutex
	seen := map[string]string{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["Authorization"] = r.Header.Get("Authorization")
		seen["X-Team"] = r.Header.Get("X-Team")
		mu.Unlock()
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(func() { proxy.CloseClientConnections(); proxy.Close() }) // after the set's Close
	set := connect(t, Config{"remote": {
		URL:     proxy.URL + "/mcp",
		Headers: map[string]secret.String{"X-Team": secret.New("blue")},
		Auth:    &Auth{Strategy: AuthBearer, Value: secret.New("tok-9")},
	}}, nil)
	if o := call(t, findTool(t, set, "echo"), `{"message": "via proxy"}`); o.IsError {
		t.Fatalf("echo: %+v", o)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["Authorization"] != "Bearer tok-9" || seen["X-Team"] != "blue" {
		t.Errorf("headers seen by the server: %v", seen)
	}
}

func TestRemoteServerRestarted(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	base, kill := startHTTPServerOn(t, "streamableHttp", port)
	set := connect(t, Config{"remote": {URL: base + "/mcp"}}, &Options{CallTimeout: 10 * time.Second})
	echo := findTool(t, set, "echo")
	if o := call(t, echo, `{"message": "one"}`); o.IsError {
		t.Fatalf("first call: %+v", o)
	}
	kill()
	startHTTPServerOn(t, "streamableHttp", port) // a new server: the old session is unknown to it
	o := call(t, echo, `{"message": "two"}`)
	if !o.IsError {
		t.Logf("the call after the restart succeeded: %s", text(o))
	}
	o = call(t, echo, `{"message": "three"}`)
	if o.IsError || !strings.Contains(text(o), "Echo: three") {
		t.Errorf("call after reconnect: %s", text(o))
	}
}
