// Package childconversation provides the start_child_conversation tool: the
// agent starts a child conversation that works on a task on its own, on the
// same server as its conversation, and goes on without waiting for it.
//
// The tool asks the server's child-launch route (POST
// /api/conversations/{id}/children, as in the reference 1.58.2) at the
// spec's launch_url param, or else on the server an embedding program
// handed over (UseServer: its URL and key), or else at
// $OH_INTERNAL_SERVER_URL, with the
// server's own session key: the one handed over with UseSessionKey, or else
// $OH_SESSION_API_KEYS_0 or $SESSION_API_KEY (gohands serve sets
// $OH_INTERNAL_SERVER_URL to its own address when the deployer did not,
// and hands its first session key over before it removes the keys from
// its environment, where the agents' commands could read them). With neither, the conversation is not on a server (a
// local gohands run) and the tool answers the model with an error; the
// reference falls back to http://127.0.0.1:8000, which from a local run
// reaches no server or some other process.
// The child gets the parent's settings from the server (its confirmation
// policy, stuck detection and limits among them); the tool only sends the
// task. The server charges the child's model costs to the parent's stats
// (under "child:<id>") when each of the child's runs ends; the reference
// keeps them apart. Neither server keeps a per-run budget, so a child has
// none to share. A child cut short by a crash is resumed as any
// conversation: run again, its unfinished action is answered with the
// restart error, not run twice.
//
// Kinds: StartChildConversationTool, StartChildConversationAction,
// StartChildConversationObservation, as in the reference.
package childconversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name, and its registry name.
const Name = "start_child_conversation"

// LaunchTimeout bounds one launch: a launch may carve a git worktree.
const LaunchTimeout = 300 * time.Second

// Action and Observation are the reference's kinds, declared in package
// event.
type (
	Action      = event.StartChildConversationAction
	Observation = event.StartChildConversationObservation
)

func init() { tool.Register(Name, factory) }

func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p struct {
		LaunchURL *string `json:"launch_url"`
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s params: %w (the tool takes only launch_url)", Name, err)
	}
	o := &Options{ParentID: ctx.ConversationID}
	if p.LaunchURL != nil {
		o.LaunchURL = *p.LaunchURL
	}
	return []tool.Tool{New(o)}, nil
}

// Options configures New.
type Options struct {
	// ParentID is the id of the conversation whose children the tool starts.
	ParentID string
	// LaunchURL is the child-launch endpoint; "" is the route of the server
	// at $OH_INTERNAL_SERVER_URL.
	LaunchURL string
	// Client sends the launch; nil is a client with LaunchTimeout.
	Client *http.Client
}

const description = `Start a child conversation that works on a task by itself, in parallel, with this conversation's settings and workspace; you do not wait for it.
* The child cannot see this conversation: make task a complete brief.
* isolation "worktree" (default) gives it its own git worktree and branch, started from the default branch; use "shared" when it must see this directory's uncommitted work.
* The result has the child's id (and a URL when known): tell the user. Launch each task once; do not retry a launch that returned an id.`

// sessionKey is the key UseSessionKey handed over, or nil.
var sessionKey atomic.Pointer[string]

// UseSessionKey makes the tool send key as the server's session key
// instead of reading $OH_SESSION_API_KEYS_0 or $SESSION_API_KEY: a server
// that removes its credentials from its environment hands its first key
// over first, as the reference exports its effective key into its own.
// The key is the process's, as those variables are; "" goes back to them.
func UseSessionKey(key string) {
	if key == "" {
		sessionKey.Store(nil)
		return
	}
	sessionKey.Store(&key)
}

// handedOver is the server UseServer handed over, or nil.
var handedOver atomic.Pointer[server]

type server struct{ base, key string }

// UseServer makes the tool start children on the server at base (its
// base URL) with its session key ("": none) instead of the one at
// $OH_INTERNAL_SERVER_URL: an embedded server (server.Options.InternalURL,
// or the listener its first request came on) hands itself over. The
// server is the process's, as the variable is; release takes it back
// unless another was handed over since.
func UseServer(base, key string) (release func()) {
	p := &server{base: base, key: key}
	handedOver.Store(p)
	return func() { handedOver.CompareAndSwap(p, nil) }
}

// target is the base URL and key of the server a launch goes to; base is
// "" when there is none.
func target() (base, key string) {
	if p := handedOver.Load(); p != nil {
		return p.base, p.key
	}
	return os.Getenv(secret.InternalServerURLEnv), launchKey()
}

// launchKey is the session key a launch sends, "" for none.
func launchKey() string {
	if k := sessionKey.Load(); k != nil {
		return *k
	}
	for _, env := range []string{"OH_SESSION_API_KEYS_0", "SESSION_API_KEY"} {
		if k := os.Getenv(env); k != "" {
			return k
		}
	}
	return ""
}

// New returns the tool.
func New(opts *Options) tool.Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: LaunchTimeout}
	}
	return tool.New(Name, description, func(ctx context.Context, a *Action) (*Observation, error) {
		return launch(ctx, &o, a), nil
	}, &tool.Options{
		Kind:        "StartChildConversationTool",
		Annotations: &event.ToolAnnotations{Title: Name, OpenWorldHint: true},
	})
}

func launch(ctx context.Context, o *Options, a *Action) *Observation {
	fail := func(format string, args ...any) *Observation {
		obs := &Observation{}
		obs.IsError = true
		obs.Content = event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}
		return obs
	}
	if strings.TrimSpace(a.Task) == "" {
		return fail("task must not be empty: give the child its whole brief")
	}
	isolation := a.Isolation
	if isolation == "" {
		isolation = "worktree"
	}
	if isolation != "worktree" && isolation != "shared" {
		return fail("isolation must be worktree or shared, not %q", isolation)
	}
	url, key := o.LaunchURL, launchKey()
	if url == "" && o.ParentID == "" {
		return fail("Child conversation launch failed: this conversation has no id to start children of")
	}
	if url == "" {
		var base string
		base, key = target()
		if base == "" {
			return fail("Child conversation launch failed: this conversation is not run by an agent server, so there is nowhere to start a child; " +
				"children need gohands serve (gohands run --server URL) or the launch_url param")
		}
		url = strings.TrimRight(base, "/") + "/api/conversations/" + o.ParentID + "/children"
	}
	var title *string
	if a.Title != "" {
		title = &a.Title
	}
	body, err := json.Marshal(map[string]any{"task": a.Task, "title": title, "isolation": isolation})
	if err != nil {
		return fail("Child conversation launch failed: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fail("Child conversation launch failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Session-API-Key", key)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return fail("Child conversation launch timed out; the child may have started: ask the user before trying again")
		}
		return fail("Child conversation launch failed: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fail("Child conversation launch failed: reading the answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		return fail("Child conversation launch failed (%d): %s", resp.StatusCode, detail(data))
	}
	var r struct {
		ConversationID       *string `json:"conversation_id"`
		ParentConversationID *string `json:"parent_conversation_id"`
		Status               *string `json:"status"`
		Title                *string `json:"title"`
		URL                  *string `json:"url"`
		Workspace            *string `json:"workspace"`
		Isolation            *string `json:"isolation"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ConversationID == nil || r.ParentConversationID == nil || r.Status == nil {
		return fail("Child conversation launch failed: the launcher's answer is not a child conversation: %.200s", data)
	}
	obs := &Observation{
		ConversationID: *r.ConversationID, ParentConversationID: *r.ParentConversationID, Status: *r.Status,
		Title: deref(r.Title), URL: deref(r.URL), Workspace: deref(r.Workspace), Isolation: deref(r.Isolation),
	}
	pretty, _ := json.MarshalIndent(json.RawMessage(data), "", "  ")
	obs.Content = event.List[event.Content]{event.Text(fmt.Sprintf("Started child conversation %s (status: %s).\n%s", obs.ConversationID, obs.Status, pretty))}
	return obs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// detail is an error answer's detail, or its start.
func detail(data []byte) string {
	var v struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &v) == nil && len(v.Detail) > 0 {
		var s string
		if json.Unmarshal(v.Detail, &s) == nil && s != "" {
			return s
		}
		return string(v.Detail)
	}
	if len(data) > 500 {
		data = data[:500]
	}
	return string(data)
}
