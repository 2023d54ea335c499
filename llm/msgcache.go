package llm

import (
	"slices"
	"sync"

	"github.com/gohands/gohands/event"
)

// MessageCache keeps the wire encoding of each message of a provider's
// previous request, so that the next request, which usually repeats them
// and adds a few (an agent resends its whole history every step), encodes
// only the messages that changed: the cost of a step then stays flat as
// the history grows. Providers get it as Request.Cache; each LLM has its
// own. The zero value is ready to use, and it is safe for concurrent use
// (concurrent callers with different message lists only miss).
type MessageCache struct {
	mu   sync.Mutex
	key  any
	msgs []event.Message // the previous request's, shallow copies
	enc  [][]byte
}

// Encode returns the encodings of msgs in order. A message that is the
// same as the one at its position in the previous call with the same key
// gets the encoding kept from that call; others get encode(i). key holds
// whatever else the encoding depends on (the provider and its flags), and
// must be comparable. A nil cache encodes every message.
//
// "The same" compares the messages' fields, texts and slices by value
// except image URL lists, compared by identity. The cache keeps the
// previous messages, so their memory cannot be reused for other content
// while they are compared against.
func (c *MessageCache) Encode(key any, msgs []event.Message, encode func(i int) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	if c == nil {
		for i := range msgs {
			b, err := encode(i)
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != key {
		c.msgs, c.enc = nil, nil
	}
	c.key = key
	for i := range msgs {
		if i < len(c.msgs) && sameMessage(&c.msgs[i], &msgs[i]) {
			out[i] = c.enc[i] // and c.msgs[i] stays: the same message
			continue
		}
		b, err := encode(i)
		if err != nil {
			c.msgs, c.enc = nil, nil
			return nil, err
		}
		out[i] = b
		if i < len(c.msgs) {
			c.msgs[i] = msgs[i]
		} else {
			c.msgs = append(c.msgs, msgs[i])
		}
	}
	// c.enc is never written in place: out may be shared with the caller.
	c.msgs, c.enc = c.msgs[:len(msgs)], out
	return out, nil
}

func sameMessage(a, b *event.Message) bool {
	return a.Role == b.Role && a.ToolCallID == b.ToolCallID && a.Name == b.Name &&
		a.ReasoningContent == b.ReasoningContent && a.ResponsesItem == b.ResponsesItem &&
		(sameArray(a.ToolCalls, b.ToolCalls) || slices.Equal(a.ToolCalls, b.ToolCalls)) &&
		(sameArray(a.ThinkingBlocks, b.ThinkingBlocks) || slices.Equal(a.ThinkingBlocks, b.ThinkingBlocks)) &&
		(sameArray(a.Content, b.Content) || slices.EqualFunc(a.Content, b.Content, func(x, y event.Content) bool {
			return x.Type == y.Type && x.Text == y.Text && x.CachePrompt == y.CachePrompt && sameArray(x.ImageURLs, y.ImageURLs)
		}))
}

// sameArray reports whether a and b are the same elements of the same
// array, which an agent's history, resent at every step, mostly is. It
// says nothing a comparison by value would not: the cache's copy of a
// message shares its arrays with the message, so an array changed in
// place would compare equal to itself either way.
func sameArray[S ~[]E, E any](a, b S) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
