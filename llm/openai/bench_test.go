package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// cannedReplies are a reply in each wire format of this package: 200
// words of text (one event per word when streamed) and a tool call.
func cannedReplies() map[string]string {
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("word%d ", i))
	}
	text := strings.Join(words, "")
	call := `{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls -la\"}"}}`
	out := map[string]string{
		"chat":      `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"` + text + `","tool_calls":[` + call + `]}}],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":800}}}`,
		"responses": `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5-mini","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"terminal","arguments":"{\"command\":\"ls -la\"}","status":"completed"}],"usage":{"input_tokens":1000,"output_tokens":200,"total_tokens":1200,"input_tokens_details":{"cached_tokens":800},"output_tokens_details":{"reasoning_tokens":0}}}`,
	}
	var b strings.Builder
	chunk := func(delta string) {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", delta)
	}
	chunk(`{"role":"assistant","content":""}`)
	for _, w := range words {
		chunk(`{"content":"` + w + `"}`)
	}
	chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"terminal","arguments":""}}]}`)
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls -la\"}"}}]}`)
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":200,\"total_tokens\":1200}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	out["chat-stream"] = b.String()
	b.Reset()
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"gpt-5-mini","output":[]}}`)
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}`)
	for i, w := range words {
		ev("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"%s"}`, i+2, w))
	}
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":300,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"terminal","arguments":"","status":"in_progress"}}`)
	ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":301,"item_id":"fc_1","output_index":1,"delta":"{\"command\":\"ls -la\"}"}`)
	ev("response.completed", `{"type":"response.completed","sequence_number":302,"response":`+out["responses"]+`}`)
	out["responses-stream"] = b.String()
	return out
}

// BenchmarkComplete is the client's cost of one call with a 100-message
// history: encoding, sending, reading and decoding the reply (the server
// writes canned bytes).
func BenchmarkComplete(b *testing.B) {
	replies := cannedReplies()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := "chat"
		if strings.HasSuffix(r.URL.Path, "/responses") {
			key = "responses"
		}
		if r.Header.Get("X-Bench-Stream") == "1" {
			key += "-stream"
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write([]byte(replies[key]))
	}))
	defer srv.Close()
	var history []event.Message
	history = append(history, event.Message{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(strings.Repeat("You are a careful engineer. ", 50))}})
	for i := range 50 {
		history = append(history,
			event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Looking.")}, ToolCalls: []event.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "terminal", Arguments: `{"command":"cat file.go"}`}}},
			event.Message{Role: event.RoleTool, ToolCallID: fmt.Sprintf("call_%d", i), Name: "terminal", Content: event.List[event.Content]{event.Text(strings.Repeat("package main // a line of output\n", 40))}},
		)
	}
	for _, api := range []struct{ name, model string }{{"chat", "openai/gpt-4o"}, {"responses", "openai/gpt-5-mini"}} {
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/stream=%v", api.name, stream), func(b *testing.B) {
				cfg := llm.DefaultConfig(api.model)
				cfg.APIKey = secret.New("sk-bench")
				cfg.BaseURL = srv.URL + "/v1"
				if stream {
					cfg.ExtraHeaders = map[string]string{"X-Bench-Stream": "1"}
				}
				l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client(), Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				var opts *llm.CallOptions
				if stream {
					opts = &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
				}
				b.ReportAllocs()
				for b.Loop() {
					r, err := l.Completion(context.Background(), history, tools, opts)
					if err != nil {
						b.Fatal(err)
					}
					if len(r.Message.ToolCalls) != 1 || !strings.HasPrefix(event.TextOf(r.Message.Content), "word0 ") {
						b.Fatalf("reply %+v", r.Message)
					}
				}
			})
		}
	}
}
