package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace"
)

// snapshotFrame is a full_state ConversationStateUpdateEvent.
func snapshotFrame(t *testing.T, status conversation.ExecutionStatus) []byte {
	t.Helper()
	b, err := event.Marshal(&event.ConversationStateUpdateEvent{
		Base: event.NewBase(event.SourceEnvironment), Key: event.FullStateKey,
		Value: map[string]any{"execution_status": status},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWaitOnSnapshot: a server whose run ends with a full_state snapshot
// and no logged status update (as after a restart, or a server that does
// not log it). Wait returns the snapshot's status, and Subscribe's
// subscribers get the snapshot; before, they got nothing and a program
// watching events for the status waited forever.
func TestWaitOnSnapshot(t *testing.T) {
	id := uuid.NewString()
	end := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/conversations/{id}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"id": id, "execution_status": "running", "agent": map[string]any{"kind": "Agent", "llm": map[string]any{"model": "m"}}})
	})
	mux.HandleFunc("GET /api/conversations/{id}/events/search", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"items": [], "next_page_id": null}`))
	})
	mux.HandleFunc("/sockets/events/{id}", func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		ctx := r.Context()
		conn.Write(ctx, websocket.MessageText, snapshotFrame(t, conversation.StatusRunning))
		select {
		case <-end:
			conn.Write(ctx, websocket.MessageText, snapshotFrame(t, conversation.StatusFinished))
		case <-ctx.Done():
		}
		conn.Read(ctx) // until the client goes
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer hs.CloseClientConnections()

	ctx := t.Context()
	c, err := remote.Attach(ctx, &workspace.Remote{Host: hs.URL, WorkingDir: t.TempDir()}, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	heard := make(chan conversation.ExecutionStatus, 8)
	unsubscribe := c.Subscribe(func(e event.Event) {
		if u, ok := e.(*event.ConversationStateUpdateEvent); ok && u.Key == event.FullStateKey {
			heard <- c.Status()
		}
	})
	defer unsubscribe()
	if c.Status() != conversation.StatusRunning {
		t.Fatalf("status %s before the end", c.Status())
	}
	close(end)
	wctx, cancel := context.WithTimeout(ctx, time.Minute) // a hang guard
	defer cancel()
	st, err := c.Wait(wctx)
	if err != nil || st != conversation.StatusFinished {
		t.Fatalf("Wait = %s, %v; want finished", st, err)
	}
	select {
	case st := <-heard:
		if st != conversation.StatusFinished {
			t.Errorf("the subscriber heard %s", st)
		}
	case <-time.After(10 * time.Second): // a hang guard
		t.Fatal("subscribers did not get the snapshot that ended the run")
	}
}

// TestStartChildAndWait starts a child of a conversation through the SDK
// on gohands' server, waits for the run the server started, and finds it
// among the parent's children; a bad isolation is the server's 422.
func TestStartChildAndWait(t *testing.T) {
	ts := startServer(t)
	model := llmtest.NewResponder(t, stepsResponder(func(n int) bool { return n >= 1 }), nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard
	defer cancel()
	parent, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	col := &collector{}
	child, err := parent.StartChild(ctx, "echo something", &remote.ChildOptions{Title: "Echo", Isolation: "shared", Options: &remote.Options{OnEvent: col.onEvent}})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	st, err := child.Wait(ctx)
	if err != nil || st != conversation.StatusFinished {
		t.Fatalf("child Wait = %s, %v; want finished", st, err)
	}
	checkExactlyOnce(t, col.get(), serverIDs(t, ts.direct(), child.ID()))
	ids, err := parent.Children(ctx)
	if err != nil || !slices.Equal(ids, []string{child.ID()}) {
		t.Errorf("Children = %v, %v; want [%s]", ids, err, child.ID())
	}
	var ae *workspace.APIError
	if _, err := parent.StartChild(ctx, "x", &remote.ChildOptions{Isolation: "bogus"}); !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
		t.Errorf("bad isolation: %v, want a 422 APIError", err)
	}
}
