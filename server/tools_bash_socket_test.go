package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/server"
)

func TestToolsRoute(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	var names []string
	ts.must(200, "GET", "/api/tools/", nil, &names)
	for _, want := range []string{"terminal", "file_editor", "apply_patch", "task_tool_set", "browser_tool_set"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	ts.key = ""
	if status, body := ts.do("GET", "/api/tools/", nil); status != 401 {
		t.Errorf("without a key: %d %s", status, body)
	}
}

// bashFrame is a BashCommand or BashOutput frame.
type bashFrame struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Command   string  `json:"command"`
	CommandID string  `json:"command_id"`
	ExitCode  *int    `json:"exit_code"`
	Stdout    *string `json:"stdout"`
}

func readBash(t *testing.T, c *websocket.Conn) (bashFrame, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		return bashFrame{}, err
	}
	var f bashFrame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f, nil
}

// The bash socket runs the commands its client sends and streams their
// events; resend_mode=all replays the history first; a bad key closes it
// with 4001.
func TestBashSocket(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	bad, err := dial(t, ts, "/sockets/bash-events?session_api_key=wrong")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readBash(t, bad); websocket.CloseStatus(err) != 4001 {
		t.Errorf("bad key: %v, want close 4001", err)
	}

	c, err := dial(t, ts, "/sockets/bash-events?session_api_key=k")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(context.Background(), websocket.MessageText, []byte(`{"command":"echo from-socket"}`)); err != nil {
		t.Fatal(err)
	}
	var cmdID string
	for {
		f, err := readBash(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind == "BashCommand" && f.Command == "echo from-socket" {
			cmdID = f.ID
		}
		if f.Kind == "BashOutput" && f.CommandID == cmdID && f.ExitCode != nil {
			if *f.ExitCode != 0 || f.Stdout == nil || *f.Stdout != "from-socket\n" {
				t.Errorf("output %+v", f)
			}
			break
		}
	}
	if cmdID == "" {
		t.Fatal("no BashCommand frame")
	}
	// A new socket asking for everything gets the command first.
	again, err := dial(t, ts, "/sockets/bash-events?session_api_key=k&resend_mode=all")
	if err != nil {
		t.Fatal(err)
	}
	defer again.CloseNow()
	f, err := readBash(t, again)
	if err != nil || f.ID != cmdID {
		t.Errorf("first replayed frame %+v %v, want the command %s", f, err, cmdID)
	}
}
