package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// DefaultTitleLength is the longest title GenerateTitle makes unless told
// otherwise (the reference's default).
const DefaultTitleLength = 50

// ErrNoUserMessage is returned by GenerateTitle for a conversation without
// a user message to make a title from.
var ErrNoUserMessage = errors.New("conversation has no user message")

// titlePrompt asks for a title. Ours, short: the reference's wording is
// not copied.
const titlePrompt = "Write a short title for a conversation with a software engineering agent that starts with the user message below. " +
	"Start it with one fitting emoji. Reply with the title only: no quotes, no explanation, at most %d characters."

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

// FirstUserMessage returns the text of the conversation's first user
// message with text, or "".
func (c *LocalConversation) FirstUserMessage() string { return FirstUserMessage(c.state) }

// FirstUserMessage returns the text of st's first user message with
// text, or "".
func FirstUserMessage(st *State) string {
	p, err := st.Events().Search(Query{Kind: event.KindMessage, Source: event.SourceUser})
	if err != nil {
		return ""
	}
	for _, en := range p.Entries {
		e, err := st.Events().Event(en.Index)
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

// GenerateTitle implements Conversation with the agent's model. It is
// returned, not stored: see SetTitle.
func (c *LocalConversation) GenerateTitle(ctx context.Context, maxLength int) (string, error) {
	if c.isClosed() {
		return "", ErrConversationClosed
	}
	if FirstUserMessage(c.state) == "" {
		return "", ErrNoUserMessage // before the agent is started for its model
	}
	return generateTitle(ctx, c.state, c.AgentModel(ctx), maxLength, c.log)
}

// GenerateTitle makes a title for the conversation of st from its first
// user message with model (a cheaper one than the agent's, say). When
// model is nil or the call fails, the message itself, shortened, is the
// title. The title is at most maxLength characters (DefaultTitleLength
// if 0). It fails with ErrNoUserMessage if st has no user message.
func GenerateTitle(ctx context.Context, st *State, model llm.Model, maxLength int) (string, error) {
	return generateTitle(ctx, st, model, maxLength, slog.Default())
}

func generateTitle(ctx context.Context, st *State, model llm.Model, maxLength int, log *slog.Logger) (string, error) {
	if maxLength <= 0 {
		maxLength = DefaultTitleLength
	}
	msg := FirstUserMessage(st)
	if msg == "" {
		return "", ErrNoUserMessage
	}
	if model != nil {
		t, err := TitleFromMessage(ctx, model, msg, maxLength)
		if err == nil {
			return t, nil
		}
		log.Warn("title: the model failed; using the message", "err", err)
	}
	return shorten(msg, maxLength), nil
}

// TitleFromMessage asks model for a title of at most maxLength characters
// for a conversation starting with msg.
func TitleFromMessage(ctx context.Context, model llm.Model, msg string, maxLength int) (string, error) {
	if r := []rune(msg); len(r) > 1000 {
		msg = string(r[:1000]) + "…"
	}
	resp, err := model.Completion(ctx, []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(fmt.Sprintf(titlePrompt, maxLength))}},
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

// shorten cuts s to at most n characters, ending it with "..." when cut,
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
