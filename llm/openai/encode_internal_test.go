package openai

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// TestEncodeChatCached checks that the body built from cached message
// encodings is byte for byte the body encoded whole, over a growing
// history with prompt-cache markers moving to the last message, a
// message replaced in place (a condensed history) and changed flags.
func TestEncodeChatCached(t *testing.T) {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.CachingPrompt = true
	sig := "sig"
	msgs := []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("You are a bench.")}},
		event.UserMessage("Do the \"task\" <now>."),
	}
	for i := range 6 {
		msgs = append(msgs,
			event.Message{Role: event.RoleAssistant, ReasoningContent: "hmm", ThinkingBlocks: event.List[event.ThinkingBlock]{{Thinking: "t", Signature: &sig}},
				ToolCalls: []event.ToolCall{{ID: fmt.Sprint("call_", i), Name: "think", Arguments: `{"thought":"x"}`}}},
			event.Message{Role: event.RoleTool, ToolCallID: fmt.Sprint("call_", i), Name: "think",
				Content: event.List[event.Content]{event.Text("Your thought has been logged."), event.Image("https://example.com/a.png")}})
	}
	cache := &llm.MessageCache{}
	check := func(name string, req *llm.Request) {
		t.Helper()
		want, err := marshalBody(chatBody(req), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeChat(req)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: cached encoding differs:\n got %s\nwant %s", name, got, want)
		}
	}
	req := func(ms []event.Message, vision bool) *llm.Request {
		c := cfg
		return &llm.Request{
			Endpoint: llm.Endpoint{Model: "gpt-4o", Provider: "openai"}, Config: &c,
			Features: llm.Features{Vision: vision, SendReasoningContent: true},
			Messages: ms, Tools: []llm.ToolSpec{{Name: "think", Description: "Think.", Parameters: []byte(`{"type":"object"}`)}},
			ConversationID: "c1", Cache: cache,
		}
	}
	for n := 2; n <= len(msgs); n += 2 {
		ms := append([]event.Message(nil), msgs[:n]...)
		// The last user or tool message carries the cache marker, as
		// markCachePoints sets it: a copy with the flag.
		last := ms[n-1]
		last.Content = append(event.List[event.Content](nil), last.Content...)
		last.Content[0].CachePrompt = true
		ms[n-1] = last
		check(fmt.Sprintf("%d messages", n), req(ms, true))
	}
	replaced := append([]event.Message(nil), msgs...)
	replaced[3] = event.UserMessage("A summary of what happened.")
	check("replaced", req(replaced, true))
	check("no vision", req(replaced, false))
	check("no cache", &llm.Request{Endpoint: llm.Endpoint{Model: "m"}, Config: &cfg, Messages: msgs})
}

// TestBodyReader checks that a request body made of pieces reads as its
// bytes whatever the read sizes, and can be read again.
func TestBodyReader(t *testing.T) {
	for _, b := range []body{
		{head: []byte(`{"a":[`), items: [][]byte{[]byte("1"), []byte("22"), nil, []byte("333")}, tail: []byte(`]}`)},
		{head: []byte(`{"a":[`), items: [][]byte{[]byte("1")}, tail: []byte(`]}`)},
		{head: []byte(`{"a":[`), tail: []byte(`]}`)},
		{head: []byte(`{}`)},
	} {
		want := string(b.head) + string(bytes.Join(b.items, []byte(","))) + string(b.tail)
		if got := string(b.bytes()); got != want || b.len() != len(want) {
			t.Errorf("bytes() = %q (len %d), want %q", got, b.len(), want)
		}
		for _, size := range []int{1, 2, 3, 7, 64} {
			r := &bodyReader{b: b}
			var got []byte
			buf := make([]byte, size)
			for {
				n, err := r.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Fatalf("size %d: Read returned 0, nil", size)
				}
			}
			if string(got) != want {
				t.Errorf("size %d: read %q, want %q", size, got, want)
			}
			// Read in part, then written out: the rest, as Len says.
			r = &bodyReader{b: b}
			n, _ := r.Read(buf)
			if r.Len() != len(want)-n {
				t.Errorf("size %d: Len() = %d after reading %d of %d", size, r.Len(), n, len(want))
			}
			var w bytes.Buffer
			if m, err := r.WriteTo(&w); err != nil || int(m) != len(want)-n || string(buf[:n])+w.String() != want {
				t.Errorf("size %d: WriteTo wrote %d %q (%v) after %q, want %q", size, m, w.String(), err, buf[:n], want)
			}
			if r.Len() != 0 {
				t.Errorf("size %d: Len() = %d after WriteTo", size, r.Len())
			}
		}
	}
}
