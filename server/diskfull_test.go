package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// fullStore fails every write (appends and base state) with ENOSPC while
// full is set, as a full disk does.
type fullStore struct {
	conversation.Store
	full *atomic.Bool
}

func (s fullStore) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	if s.full.Load() {
		return conversation.Entry{}, fmt.Errorf("writing event %s: %w", e.EventBase().ID, syscall.ENOSPC)
	}
	return s.Store.Append(ctx, ent, e)
}

func (s fullStore) WriteBase(ctx context.Context, data []byte) error {
	if s.full.Load() {
		return fmt.Errorf("writing the base state: %w", syscall.ENOSPC)
	}
	return s.Store.WriteBase(ctx, data)
}

type fullBackend struct {
	conversation.Backend
	full *atomic.Bool
}

func (b fullBackend) Open(ctx context.Context, id string) (conversation.Store, error) {
	s, err := b.Backend.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return fullStore{s, b.full}, nil
}

// TestDiskFullRecovers: a run on a full disk ends in error and says why
// (a ConversationErrorEvent to the socket at once, stored once the disk
// has room), and once the disk has room a run works, without a restart
// (issue 35 item 4: the status was error with no event, and /run answered
// 200 and ran nothing).
func TestDiskFullRecovers(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "done"})
	ts := newTestServer(t, nil)
	full := &atomic.Bool{}
	server.WrapBackend(ts.srv, func(b conversation.Backend) conversation.Backend { return fullBackend{b, full} })
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "go"}}},
	}), &info)
	id := info["id"].(string)
	sock, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.CloseNow()
	// The server subscribes a socket, then sends it the state snapshot: with
	// the snapshot here, the live-only error event (the store cannot take
	// it) reaches this socket. Without the wait, a run on a loaded machine
	// could fail before the subscription, and the event went to nobody.
	if first, err := readFrame(t, sock); err != nil || first.Kind != "ConversationStateUpdateEvent" || first.Key != event.FullStateKey {
		t.Fatalf("first frame %+v (%v), want the state snapshot", first, err)
	}

	full.Store(true)
	ts.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
	ts.waitStatus(id, "error")
	var live frame
	for live.Kind != "ConversationErrorEvent" {
		if live, err = readFrame(t, sock); err != nil {
			t.Fatalf("no ConversationErrorEvent on the socket: %v", err)
		}
	}

	full.Store(false)
	ts.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
	ts.waitStatus(id, "finished")
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var kinds []string
	errAt, answerAt := -1, -1
	for i, raw := range page.Items {
		var e struct {
			ID, Kind, Code, Detail, Source string
		}
		json.Unmarshal(raw, &e)
		kinds = append(kinds, e.Kind)
		switch {
		case e.Kind == "ConversationErrorEvent":
			errAt = i
			if e.ID != live.ID || e.Code != "OSError" || !strings.Contains(e.Detail, "no space left on device") {
				t.Errorf("stored error event %s, the socket got %s", raw, live.ID)
			}
		case e.Kind == "MessageEvent" && e.Source == "agent":
			answerAt = i
		}
	}
	if errAt < 0 || answerAt < errAt {
		t.Errorf("want the error stored, then the answer of the second run: %v", kinds)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}
