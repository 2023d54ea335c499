package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// Deleting a conversation while its task tool's sub-agent runs ends the
// sub-agent: its model request in flight is given up, and it does not
// call the model again.
func TestDeleteEndsSubAgent(t *testing.T) {
	t.Parallel()
	parentModel := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{
		Name: "task", Arguments: `{"prompt": "SUB-AGENT-TASK: wait for me"}`,
	}}})
	target, err := url.Parse(parentModel.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// The sub-agent's request waits for its client to go away; the
	// parent's go to the scripted model.
	subStarted, subGone := make(chan struct{}), make(chan struct{})
	var startOnce, goneOnce sync.Once
	var mu sync.Mutex
	subCalls := 0
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte("SUB-AGENT-TASK")) || bytes.Contains(body, []byte("delegate it")) {
			r.Body = io.NopCloser(bytes.NewReader(body))
			proxy.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		subCalls++
		mu.Unlock()
		startOnce.Do(func() { close(subStarted) })
		<-r.Context().Done()
		goneOnce.Do(func() { close(subGone) })
	}))
	t.Cleanup(model.Close)

	ts := newTestServer(t, nil)
	body := ts.startBody(parentModel, map[string]any{"initial_message": runMessage("delegate it")})
	ag := body["agent"].(map[string]any)
	ag["llm"].(map[string]any)["base_url"] = model.URL + "/v1"
	ag["tools"] = append(ag["tools"].([]any), map[string]any{"name": "task_tool_set", "params": map[string]any{}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)

	select { // a hang guard
	case <-subStarted:
	case <-time.After(2 * time.Minute):
		t.Fatal("the sub-agent never called the model")
	}
	// A hang guard over both: a sub-agent left running holds its request
	// open until its model timeout (minutes), and the delete waits for it.
	guard := time.After(time.Minute)
	deleted := make(chan int, 1)
	go func() {
		code := -1
		req, err := http.NewRequest("DELETE", ts.http.URL+"/api/conversations/"+id, nil)
		if err == nil {
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				code = resp.StatusCode
			}
		}
		deleted <- code
	}()
	for range 2 {
		select {
		case <-subGone:
			subGone = nil
		case code := <-deleted:
			if code != 200 {
				t.Fatalf("DELETE: status %d", code)
			}
		case <-guard:
			t.Fatal("the sub-agent's model request is still open a minute after the delete")
		}
	}
	ts.must(404, "GET", "/api/conversations/"+id, nil, nil)
	mu.Lock()
	defer mu.Unlock()
	if subCalls != 1 {
		t.Errorf("the sub-agent called the model %d times", subCalls)
	}
}
