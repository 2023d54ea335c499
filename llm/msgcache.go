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
// the history grows. New encodings are appended to a buffer, joined by a
// separator, so that a history goes to the connection as a few long
// slices rather than copied piece by piece. Providers get it as
// Request.Cache; each LLM has its own. The zero value is ready to use, and
// it is safe for concurrent use (concurrent callers with different message
// lists only miss).
type MessageCache struct {
	mu   sync.Mutex
	key  any
	sep  byte
	msgs []event.Message // the previous request's, shallow copies
	enc  [][]byte        // their encodings, each in buf or an earlier buffer
	next []bool          // next[i]: enc[i] follows enc[i-1] and sep in one buffer
	// buf is where new encodings go. Its bytes, once returned, are never
	// written again: it only grows past them, or is replaced.
	buf  []byte
	last int // the message whose encoding ends buf, -1 if none
}

// maxPieces bounds the pieces Encode returns: past it the encodings are
// copied into one buffer. A history whose middle changes at every step
// (a prompt-cache marker that moves) breaks it once a step.
const maxPieces = 64

// Encode returns the encodings of msgs joined by sep, as a few pieces
// that make the whole when joined by sep in turn. A message that is the
// same as the one at its position in the previous call with the same key
// and sep keeps the encoding of that call; others get encode(i). key
// holds whatever else the encoding depends on (the provider and its
// flags), and must be comparable. A nil cache encodes every message, one
// piece each. The pieces must not be modified.
//
// "The same" compares the messages' fields, texts and slices by value
// except image URL lists, compared by identity. The cache keeps the
// previous messages, so their memory cannot be reused for other content
// while they are compared against.
func (c *MessageCache) Encode(key any, msgs []event.Message, sep byte, encode func(i int) ([]byte, error)) ([][]byte, error) {
	if c == nil {
		out := make([][]byte, len(msgs))
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
	if c.key != key || c.sep != sep {
		c.msgs, c.enc, c.next, c.buf, c.last = nil, nil, nil, nil, -1
	}
	c.key, c.sep = key, sep
	kept := false // whether enc[i-1] is the previous call's
	reused := 0
	for i := range msgs {
		if i < len(c.msgs) && sameMessage(&c.msgs[i], &msgs[i]) {
			c.next[i] = c.next[i] && kept
			kept = true
			reused++
			continue // and c.msgs[i] stays: the same message
		}
		kept = false
		b, err := encode(i)
		if err != nil {
			c.msgs, c.enc, c.next, c.buf, c.last = nil, nil, nil, nil, -1
			return nil, err
		}
		joined := i > 0 && c.last == i-1 && len(c.buf)+1+len(b) <= cap(c.buf)
		if !joined && len(c.buf)+len(b) > cap(c.buf) {
			// Grown by a quarter, as append grows a large slice: the
			// room left is at most a fifth of the history.
			c.buf = make([]byte, 0, max(cap(c.buf)+cap(c.buf)/4, 2*len(b), 16<<10))
		}
		if joined {
			c.buf = append(c.buf, sep)
		}
		start := len(c.buf)
		c.buf = append(c.buf, b...)
		c.last = i
		if i < len(c.msgs) {
			c.msgs[i], c.enc[i], c.next[i] = msgs[i], c.buf[start:], joined
		} else {
			c.msgs, c.enc, c.next = append(c.msgs, msgs[i]), append(c.enc, c.buf[start:]), append(c.next, joined)
		}
	}
	c.msgs, c.enc, c.next = c.msgs[:len(msgs)], c.enc[:len(msgs)], c.next[:len(msgs)]
	if c.last >= len(msgs) {
		c.last = -1
	}
	out := c.pieces()
	// Mostly new encodings beside a few old ones (a condensed history)
	// would keep the old buffers for those few.
	if len(out) > maxPieces || reused > 0 && 2*reused < len(msgs) {
		c.compact()
		out = c.pieces()
	}
	return out, nil
}

// pieces returns c.enc joined, a piece per run of encodings that follow
// each other in one buffer. An encoding's slice reaches to the end of its
// buffer, so a run is its first encoding's slice extended.
func (c *MessageCache) pieces() [][]byte {
	var out [][]byte
	for i, e := range c.enc {
		if i > 0 && c.next[i] {
			p := out[len(out)-1]
			out[len(out)-1] = p[:len(p)+1+len(e)]
			continue
		}
		out = append(out, e)
	}
	for i, p := range out {
		out[i] = p[:len(p):len(p)]
	}
	return out
}

// compact copies the encodings into one new buffer.
func (c *MessageCache) compact() {
	n := len(c.enc) // separators
	for _, e := range c.enc {
		n += len(e)
	}
	buf := make([]byte, 0, n+n/4)
	for i, e := range c.enc {
		if i > 0 {
			buf = append(buf, c.sep)
		}
		start := len(buf)
		buf = append(buf, e...)
		c.enc[i], c.next[i] = buf[start:], i > 0
	}
	c.buf, c.last = buf, len(c.enc)-1
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
