package conversation

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Closed reports whether Close has been called.
func (c *LocalConversation) Closed() bool { return c.isClosed() }

// AgentModel returns the model the agent lends for side calls (a title,
// a goal's judge), starting the agent if need be, or nil if it lends
// none. It fails with ErrConversationClosed after Close.
func (c *LocalConversation) AgentModel(ctx context.Context) (llm.Model, error) {
	if c.isClosed() {
		return nil, ErrConversationClosed
	}
	r, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	return r.Model(), nil
}

// RecordUpdate appends a ConversationStateUpdateEvent with key and value
// to the log: how the reference records what is not a field of the state,
// such as a goal loop's status (conversation/goal).
func (c *LocalConversation) RecordUpdate(key string, value any) error {
	if c.isClosed() {
		return ErrConversationClosed
	}
	_, err := c.state.Append(&event.ConversationStateUpdateEvent{
		Base: event.NewBase(event.SourceEnvironment), Key: key, Value: value,
	})
	return err
}

// Title returns the conversation's title: its "title" tag (where Fork
// and SetTitle keep it), or "".
func (c *LocalConversation) Title() string { return c.state.Fields().Tags["title"] }

// SetTitle sets the conversation's title (the "title" tag); "" removes it.
func (c *LocalConversation) SetTitle(title string) error {
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > 256 {
		return fmt.Errorf("conversation: title longer than 256 characters")
	}
	return c.state.Update(func(f *Fields) error {
		if title == "" {
			delete(f.Tags, "title")
			return nil
		}
		if f.Tags == nil {
			f.Tags = map[string]string{}
		}
		f.Tags["title"] = title
		return nil
	})
}
