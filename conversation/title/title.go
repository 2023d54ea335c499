// Package title makes a conversation's title from its first user message
// with a model (the agent's unless told otherwise), or from the message
// itself, shortened, when there is no model or it fails. The title is
// returned, not stored: LocalConversation.SetTitle stores one.
//
// It works over conversation.Conversation: a local conversation's title is
// made here with its agent's model; a conversation that makes its titles
// where it lives (a remote one, whose agent server has generate_title)
// implements Generator and is asked for it.
package title

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// DefaultLength is the longest title Generate makes unless told otherwise
// (the reference's default).
const DefaultLength = 50

// ErrNoUserMessage is returned for a conversation without a user message
// to make a title from.
var ErrNoUserMessage = errors.New("conversation has no user message")

// prompt asks for a title. Ours, short: the reference's wording is not
// copied.
const prompt = "Write a short title for a conversation with a software engineering agent that starts with the user message below. " +
	"Start it with one fitting emoji. Reply with the title only: no quotes, no explanation, at most %d characters."

// A Generator is a conversation that makes its titles where it lives: a
// remote conversation asks its agent server, whose agent's model writes
// it. Generate asks such a conversation.
type Generator interface {
	GenerateTitle(ctx context.Context, maxLength int) (string, error)
}

// modelLender is a conversation whose agent lends its model for side calls
// (a LocalConversation).
type modelLender interface {
	Closed() bool
	AgentModel(ctx context.Context) (llm.Model, error)
}

// Generate makes a title of at most maxLength characters (DefaultLength if
// 0) for c from its first user message, with the agent's model when c
// lends it, or the message itself shortened when there is no model or it
// fails. It fails with conversation.ErrConversationClosed for a closed
// conversation and ErrNoUserMessage without a user message. A Generator is
// asked instead.
func Generate(ctx context.Context, c conversation.Conversation, maxLength int) (string, error) {
	if g, ok := c.(Generator); ok {
		return g.GenerateTitle(ctx, maxLength)
	}
	m, lends := c.(modelLender)
	if lends && m.Closed() {
		return "", conversation.ErrConversationClosed
	}
	// The message first: the agent is not started for a conversation
	// that cannot have a title.
	if FirstUserMessage(ctx, c.State()) == "" {
		return "", ErrNoUserMessage
	}
	var model llm.Model
	if lends {
		var err error
		model, err = m.AgentModel(ctx)
		if errors.Is(err, conversation.ErrConversationClosed) {
			return "", err
		}
		if err != nil {
			slog.Warn("title: the agent lends no model; using the message", "conversation", c.ID(), "err", err)
		}
	}
	return FromState(ctx, c.State(), model, maxLength)
}

// FromState makes a title for the conversation of st from its first user
// message with model (a cheaper one than the agent's, say). When model is
// nil or the call fails, the message itself, shortened, is the title. The
// title is at most maxLength characters (DefaultLength if 0). It fails
// with ErrNoUserMessage if st has no user message.
func FromState(ctx context.Context, st *conversation.State, model llm.Model, maxLength int) (string, error) {
	if maxLength <= 0 {
		maxLength = DefaultLength
	}
	msg := FirstUserMessage(ctx, st)
	if msg == "" {
		return "", ErrNoUserMessage
	}
	if model != nil {
		t, err := FromMessage(ctx, model, msg, maxLength)
		if err == nil {
			return t, nil
		}
		slog.Warn("title: the model failed; using the message", "err", err)
	}
	return shorten(msg, maxLength), nil
}

// FirstUserMessage returns the text of st's first user message with
// text, or "".
func FirstUserMessage(ctx context.Context, st *conversation.State) string {
	p, err := st.Events().Search(conversation.Query{Kind: event.KindMessage, Source: event.SourceUser})
	if err != nil {
		return ""
	}
	for _, en := range p.Entries {
		e, err := st.Events().Event(ctx, en.Index)
		if err != nil {
			continue
		}
		if m, ok := e.(*event.MessageEvent); ok {
			if t := strings.TrimSpace(event.TextOf(m.LLMMessage.Content)); t != "" {
				return t
			}
		}
	}
	return ""
}

// FromMessage asks model for a title of at most maxLength characters for
// a conversation starting with msg.
func FromMessage(ctx context.Context, model llm.Model, msg string, maxLength int) (string, error) {
	if r := []rune(msg); len(r) > 1000 {
		msg = string(r[:1000]) + "…"
	}
	resp, err := model.Completion(ctx, []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(fmt.Sprintf(prompt, maxLength))}},
		event.UserMessage(msg),
	}, nil, &llm.CallOptions{NoStream: true})
	if err != nil {
		return "", err
	}
	t := strings.Trim(strings.TrimSpace(event.TextOf(resp.Message.Content)), `"'`)
	if t == "" {
		return "", errors.New("empty title")
	}
	return shorten(t, maxLength), nil
}

// Shorten cuts s to at most n characters, ending it with "..." when cut,
// as the reference does.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 3 {
		return string(r[:n])
	}
	return string(r[:n-3]) + "..."
}
