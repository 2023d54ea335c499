package pyclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestIssue30Live158 runs issue 30's capabilities side by side on one
// reference 1.58.2 server and one gohands serve, with one scripted model
// for both, and compares what each stores and what the model is sent:
//   - children: the start_child_conversation tool (worktree and shared
//     isolation) and POST /api/conversations/{id}/children (liveChildren);
//   - sub-agents: POST /api/sub-agents lists web-researcher as 1.58.2 does,
//     and a task delegated to it offers the same tools in a request of the
//     same shape (liveSubAgents);
//   - plugins: /api/plugins/install, list and get, and a start request's
//     plugins (a local directory and a local git repository, with a
//     skill, an MCP server, a hook) with an installed plugin ambient: the
//     stored agent, the tools offered, the first request (livePlugins).
//
// Each server has its own home and worktree root; the subtests run one
// after the other on the two servers (a subtest runs its two servers at
// once).
func TestIssue30Live158(t *testing.T) {
	t.Parallel()
	testenv.Program(t, "git")
	py := testenv.Reference158Python(t)
	m := newMarkModel(t)
	pair := &livePair{model: m}
	pair.refHome, pair.goHome = t.TempDir(), t.TempDir()
	pair.refTrees, pair.goTrees = t.TempDir(), t.TempDir()
	// Both servers start at once: the reference's import is the long part.
	var wg sync.WaitGroup
	wg.Go(func() {
		pair.ref = startReferenceServer(t, py, "HOME="+pair.refHome, "OH_PERSISTENCE_DIR=",
			"OH_CONVERSATION_WORKTREE_ROOT="+pair.refTrees)
	})
	pair.gh = startGohandsServer(t, "HOME="+pair.goHome, "OH_PERSISTENCE_DIR=", "XDG_CONFIG_HOME=",
		"OH_CONVERSATION_WORKTREE_ROOT="+pair.goTrees)
	wg.Wait()
	if pair.ref == nil {
		t.FailNow()
	}
	t.Run("children", func(t *testing.T) { liveChildren(t, pair) })
	t.Run("sub-agents", func(t *testing.T) { liveSubAgents(t, pair) })
	// Last: the plugin it installs is ambient for every later start.
	t.Run("plugins", func(t *testing.T) { livePlugins(t, pair) })
}

// livePair is the two servers TestIssue30Live158 compares, and the model
// they share.
type livePair struct {
	ref, gh           *server
	refHome, goHome   string // each server's HOME
	refTrees, goTrees string // each server's conversation worktree root
	model             *markModel
}

// client is an API client of srv with a hang guard.
func (p *livePair) client(srv *server) *apiClient {
	return &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
}

// both runs f for each server at once and returns their results,
// reference first.
func both[T any](p *livePair, f func(srv *server) T) (ref, gh T) {
	var wg sync.WaitGroup
	wg.Go(func() { ref = f(p.ref) })
	wg.Go(func() { gh = f(p.gh) })
	wg.Wait()
	return ref, gh
}

// markModel is a scripted model shared by the subtests: a request is
// answered by the handler registered for a mark its first user message
// holds, and recorded under that mark; a request without tools (a title)
// gets a short text.
type markModel struct {
	*llmtest.Server
	mu       sync.Mutex
	handlers map[string]func(r llmtest.Request) llmtest.Reply
	seen     map[string][]llmtest.Request
	arrived  chan struct{} // closed and replaced at each recorded request
}

func newMarkModel(t *testing.T) *markModel {
	m := &markModel{handlers: map[string]func(llmtest.Request) llmtest.Reply{}, seen: map[string][]llmtest.Request{}, arrived: make(chan struct{})}
	m.Server = llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok {
			return llmtest.Reply{Text: "Live"}, nil
		}
		first := firstUserText(r)
		m.mu.Lock()
		var h func(llmtest.Request) llmtest.Reply
		mark := ""
		for k, f := range m.handlers {
			if strings.Contains(first, k) && len(k) > len(mark) {
				mark, h = k, f
			}
		}
		if h != nil {
			m.seen[mark] = append(m.seen[mark], r)
			close(m.arrived)
			m.arrived = make(chan struct{})
		}
		m.mu.Unlock()
		if h == nil {
			return llmtest.Reply{}, fmt.Errorf("no handler for a request whose first user message is %.200q", first)
		}
		return h(r), nil
	}, nil)
	return m
}

// handle answers the requests whose first user message holds mark with h.
func (m *markModel) handle(mark string, h func(r llmtest.Request) llmtest.Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handlers[mark] = h
}

// requests returns the requests recorded under mark.
func (m *markModel) requests(mark string) []llmtest.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmtest.Request(nil), m.seen[mark]...)
}

// finishCall is the model's finish with message.
func finishCall(message string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"message": message})
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: string(args)}}}
}

// runTurn creates a conversation from body on srv, sends text and waits
// for the run to finish; it returns the conversation's id.
func runTurn(t *testing.T, c *apiClient, srv *server, body map[string]any, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
	defer cancel()
	id, err := c.create(ctx, body)
	if err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	sub, err := c.subscribe(ctx, id)
	if err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	defer sub.close()
	if err := c.send(ctx, id, text); err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	if _, err := sub.untilFinished(ctx); err != nil {
		evs, _ := allEvents(ctx, c, id)
		b, _ := json.Marshal(evs)
		t.Fatalf("%s: %v; events:\n%.6000s", srv.name, err, b)
	}
	return id
}

// waitFinished waits until conversation id on srv has finished running:
// it subscribes to its events, then asks its status once (a run that
// ended before is seen there), then reads the socket until the status is
// finished. The first frame need not be the full_state snapshot: the
// reference may send an event before it while the conversation runs.
func waitFinished(t *testing.T, c *apiClient, srv *server, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.base, "http")+"/sockets/events/"+id, nil)
	if err != nil {
		t.Fatalf("%s: socket: %v", srv.name, err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 24)
	auth, _ := json.Marshal(map[string]string{"type": "auth", "session_api_key": apiKey})
	if err := ws.Write(ctx, websocket.MessageText, auth); err != nil {
		t.Fatalf("%s: socket auth: %v", srv.name, err)
	}
	s := &subscriber{ws: ws, seen: map[string]bool{}}
	var info struct {
		Status string `json:"execution_status"`
	}
	if _, err := c.do(ctx, "GET", "/api/conversations/"+id, nil, &info); err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	status := info.Status
	for status != "finished" {
		switch status {
		case "error", "stuck":
			t.Fatalf("%s: conversation %s ended %s", srv.name, id, status)
		}
		e, err := s.read(ctx)
		if err != nil {
			t.Fatalf("%s: conversation %s: %v", srv.name, id, err)
		}
		switch {
		case e.Key == "full_state":
			var st struct {
				Status string `json:"execution_status"`
			}
			json.Unmarshal(e.Value, &st)
			status = st.Status
		case e.Key == "execution_status":
			json.Unmarshal(e.Value, &status)
		}
	}
}

// gitRepo makes dir a git repository with one commit on main.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// substitute replaces in v (decoded JSON) every string that holds one of
// the keys of subst by its value, and drops the members named in drop.
func substitute(v any, subst [][2]string, drop ...string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			skip := false
			for _, d := range drop {
				skip = skip || d == k
			}
			if !skip {
				out[k] = substitute(x, subst, drop...)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = substitute(x, subst, drop...)
		}
		return out
	case string:
		for _, s := range subst {
			if s[0] != "" {
				v = strings.ReplaceAll(v, s[0], s[1])
			}
		}
		return v
	}
	return v
}

// resolved is path with its symbolic links resolved (a temporary
// directory may be under one).
func resolved(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
