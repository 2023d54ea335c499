package remote

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gohands/gohands/conversation"
)

// Child conversations, through the server's child-launch route (POST
// /api/conversations/{id}/children, the route the start_child_conversation
// tool calls). The reference 1.58.2's RemoteConversation has no call for
// it; the names here follow this package's.

// ChildOptions configure StartChild. A nil *ChildOptions is the default.
type ChildOptions struct {
	// Title is the child's title ("": none asked for).
	Title string
	// Isolation is "worktree" (the default: a git worktree of the
	// parent's workspace when it is a repository) or "shared" (the
	// parent's directory).
	Isolation string
	// Options configure the client of the child (its OnEvent, Logger...);
	// its ID and start settings are not used: the child has the parent's.
	Options *Options
}

// StartChild asks the server to start a child of the conversation that
// works on task with the parent's settings, and attaches to it. The child
// runs on the server on its own, at once; Wait waits for its run. The
// parent is not blocked. A parent the server does not have fails with
// ErrNotFound (and conversation.ErrNotFound); other refusals (422 for a
// bad isolation, 429 when the server runs all it may) are a
// *workspace.APIError.
func (c *Conversation) StartChild(ctx context.Context, task string, opts *ChildOptions) (*Conversation, error) {
	var o ChildOptions
	if opts != nil {
		o = *opts
	}
	body := struct {
		Task      string  `json:"task"`
		Title     *string `json:"title,omitempty"`
		Isolation *string `json:"isolation,omitempty"`
	}{Task: task, Title: optional(o.Title), Isolation: optional(o.Isolation)}
	var out struct {
		ConversationID string `json:"conversation_id"`
	}
	if err := c.post(ctx, "/children", body, &out); err != nil {
		return nil, sentinel(err, map[int]error{http.StatusNotFound: conversation.ErrNotFound})
	}
	var co Options
	if o.Options != nil {
		co = *o.Options
		co.ID = ""
	}
	child, err := Attach(ctx, c.ws, out.ConversationID, &co)
	if err != nil {
		return nil, fmt.Errorf("remote: child %s: %w", out.ConversationID, err)
	}
	return child, nil
}

// Children returns the ids of the conversation's children, oldest first,
// as the server lists them (ConversationInfo's sub_conversation_ids).
func (c *Conversation) Children(ctx context.Context) ([]string, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var info struct {
		SubConversationIDs []string `json:"sub_conversation_ids"`
	}
	if err := c.ws.Request(ctx, http.MethodGet, c.path(""), nil, nil, &info); err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	return info.SubConversationIDs, nil
}

// Wait waits while the server's conversation is running, whoever started
// the run (another client, the server for a child, a webhook), and
// returns the status it then has: at once when it is not running. It
// follows the status the socket brings (state updates and snapshots); it
// neither starts nor pauses a run. Every event logged before the status
// left running has reached the callbacks when it returns. A socket that
// drops is reconnected meanwhile; ctx bounds the wait.
func (c *Conversation) Wait(ctx context.Context) (conversation.ExecutionStatus, error) {
	for {
		c.mu.Lock()
		changed, fatal, closed := c.changed, c.fatal, c.closed
		c.mu.Unlock()
		switch {
		case closed:
			return "", conversation.ErrConversationClosed
		case fatal != nil:
			return "", fatal
		}
		if st := c.Status(); st != conversation.StatusRunning {
			if err := c.reconcile(ctx); err != nil {
				return st, err
			}
			// The events read may have brought a later status.
			if st = c.Status(); st != conversation.StatusRunning {
				return st, nil
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return c.Status(), ctx.Err()
		}
	}
}
