package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// loadPlaybook scripts every load conversation alike: one terminal command,
// then finish. Replies depend only on the conversation's own history, so
// any number of conversations share the model.
const loadPlaybook = `{"rules": [
 {"name": "title", "system": "(?i)titles|write a short title", "replies": [{"text": "Load"}], "loop": true},
 {"name": "load", "first_user": "^#load", "replies": [
  {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo load-ok"}}]},
  {"tool_calls": [{"name": "finish", "arguments": {"message": "done"}}]}]}]}`

// apiClient talks to a served agent API with the test's session key.
type apiClient struct {
	base string
	http *http.Client
}

func (c *apiClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Session-API-Key", apiKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// startBody is the create request the reference's client sends, trimmed
// to what matters: the agent with its LLM and tools, the workspace.
func startBody(modelURL, workdir string) map[string]any {
	return map[string]any{
		"agent": map[string]any{
			"kind": "Agent",
			"llm": map[string]any{
				"model": "openai/gpt-4o", "base_url": modelURL + "/v1",
				"api_key": "scripted", "usage_id": "agent", "num_retries": 0,
			},
			"tools":                 []any{map[string]any{"name": "terminal", "params": map[string]any{}}},
			"include_default_tools": []any{"FinishTool", "ThinkTool"},
		},
		"workspace":       map[string]any{"kind": "LocalWorkspace", "working_dir": workdir},
		"max_iterations":  500,
		"stuck_detection": false,
	}
}

// wsEvent is what the load client reads of a socket frame.
type wsEvent struct {
	ID    string          `json:"id"`
	Kind  string          `json:"kind"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// create creates a conversation and returns its id.
func (c *apiClient) create(ctx context.Context, body map[string]any) (string, error) {
	var info struct {
		ID string `json:"id"`
	}
	if _, err := c.do(ctx, "POST", "/api/conversations", body, &info); err != nil {
		return "", err
	}
	return info.ID, nil
}

// send posts a user message with run.
func (c *apiClient) send(ctx context.Context, id, text string) error {
	msg := map[string]any{
		"role": "user", "run": true,
		"content": []any{map[string]any{"type": "text", "text": text}},
	}
	_, err := c.do(ctx, "POST", "/api/conversations/"+id+"/events", msg, nil)
	return err
}

// subscriber is one WebSocket subscription to a conversation's events.
type subscriber struct {
	ws   *websocket.Conn
	seen map[string]bool // ids of the events received
}

// subscribe opens the conversation's socket, authenticates with the first
// frame as the reference's client does, and reads the full_state snapshot
// that comes first.
func (c *apiClient) subscribe(ctx context.Context, id string) (*subscriber, error) {
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.base, "http")+"/sockets/events/"+id, nil)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	ws.SetReadLimit(1 << 24)
	s := &subscriber{ws: ws, seen: map[string]bool{}}
	auth, _ := json.Marshal(map[string]string{"type": "auth", "session_api_key": apiKey})
	if err := ws.Write(ctx, websocket.MessageText, auth); err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("socket auth: %w", err)
	}
	first, err := s.read(ctx)
	if err != nil {
		ws.CloseNow()
		return nil, err
	}
	if first.Kind != "ConversationStateUpdateEvent" || first.Key != "full_state" {
		ws.CloseNow()
		return nil, fmt.Errorf("first frame %s/%s, want the full_state snapshot", first.Kind, first.Key)
	}
	return s, nil
}

func (s *subscriber) read(ctx context.Context) (wsEvent, error) {
	_, b, err := s.ws.Read(ctx)
	if err != nil {
		return wsEvent{}, fmt.Errorf("socket read: %w", err)
	}
	var e wsEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return wsEvent{}, fmt.Errorf("socket frame %q: %w", b, err)
	}
	return e, nil
}

// untilFinished reads frames until a full_state snapshot says the run
// finished, and returns the number of frames read. An error event or a
// run ending otherwise is an error.
func (s *subscriber) untilFinished(ctx context.Context) (int, error) {
	frames := 0
	for {
		e, err := s.read(ctx)
		if err != nil {
			return frames, err
		}
		frames++
		if e.Key == "full_state" {
			var st struct {
				Status string `json:"execution_status"`
			}
			json.Unmarshal(e.Value, &st)
			switch st.Status {
			case "finished":
				return frames, nil
			case "error", "stuck":
				return frames, fmt.Errorf("run ended %s", st.Status)
			}
			continue
		}
		if e.Kind == "ConversationErrorEvent" || e.Kind == "AgentErrorEvent" {
			return frames, fmt.Errorf("%s over the socket: %.300s", e.Kind, e.Value)
		}
		s.seen[e.ID] = true
	}
}

func (s *subscriber) close() { s.ws.Close(websocket.StatusNormalClosure, "") }

// persisted lists the kinds of a conversation's persisted events by id,
// paging through events/search.
func (c *apiClient) persisted(ctx context.Context, id string) (map[string]string, error) {
	out := map[string]string{}
	page := ""
	for {
		var res struct {
			Items []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"items"`
			Next *string `json:"next_page_id"`
		}
		q := "limit=100"
		if page != "" {
			q += "&page_id=" + url.QueryEscape(page)
		}
		if _, err := c.do(ctx, "GET", "/api/conversations/"+id+"/events/search?"+q, nil, &res); err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			out[it.ID] = it.Kind
		}
		if res.Next == nil || *res.Next == "" {
			return out, nil
		}
		page = *res.Next
	}
}

// runLoadConversation creates a conversation, subscribes to its socket,
// sends the task with run, waits for the finished snapshot, and checks
// that every persisted event also came over the socket. It returns the
// number of events delivered.
func runLoadConversation(ctx context.Context, c *apiClient, modelURL, workdir string, n int) (int, error) {
	id, err := c.create(ctx, startBody(modelURL, workdir))
	if err != nil {
		return 0, err
	}
	sub, err := c.subscribe(ctx, id)
	if err != nil {
		return 0, err
	}
	defer sub.ws.CloseNow()
	if err := c.send(ctx, id, fmt.Sprintf("#load conversation %d", n)); err != nil {
		return 0, err
	}
	if _, err := sub.untilFinished(ctx); err != nil {
		return len(sub.seen), err
	}
	events, err := c.persisted(ctx, id)
	if err != nil {
		return len(sub.seen), err
	}
	for id, kind := range events {
		// The system prompt may be written before the socket subscribed;
		// the client syncs it over REST.
		if !sub.seen[id] && kind != "SystemPromptEvent" {
			return len(sub.seen), fmt.Errorf("event %s (%s) is persisted but never came over the socket", id, kind)
		}
	}
	if len(events) < 6 {
		return len(sub.seen), fmt.Errorf("%d events persisted, want at least 6 (message, 2 actions, 2 observations, ...)", len(events))
	}
	sub.close()
	return len(sub.seen), nil
}

// TestLoad runs many conversations at once on one `gohands serve`, each
// through REST and its own WebSocket, against the scripted model: no
// errors, no event persisted but not delivered. 200 conversations with
// GOHANDS_FULL=1, 20 in CI.
func TestLoad(t *testing.T) {
	t.Parallel()
	n := 200
	if testenv.Short() {
		n = 20
	}
	p, err := llmtest.ParsePlaybook([]byte(loadPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, p.Respond, &llmtest.ResponderOptions{NoRecord: true})
	base := startGohandsServer(t, fmt.Sprintf("OH_MAX_CONCURRENT_RUNS=%d", n)).URL
	c := &apiClient{base: base, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	start := time.Now()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []string
		events int
	)
	for i := range n {
		wg.Go(func() {
			got, err := runLoadConversation(ctx, c, model.URL, t.TempDir(), i)
			mu.Lock()
			defer mu.Unlock()
			events += got
			if err != nil {
				errs = append(errs, fmt.Sprintf("conversation %d: %v", i, err))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d conversations at once: %d events over the sockets in %v, %d errors", n, events, elapsed.Round(time.Millisecond), len(errs))
	for i, e := range errs {
		if i == 10 {
			t.Errorf("... and %d more", len(errs)-10)
			break
		}
		t.Error(e)
	}
}
