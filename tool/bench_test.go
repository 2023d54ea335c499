package tool_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

func editTool() tool.Tool {
	return tool.New("file_editor", "Edits files.", func(context.Context, *editAction) (*editObs, error) { return &editObs{}, nil }, nil)
}

// BenchmarkPrepareCall measures the whole path from a model's tool call to
// an action: parse, normalise, repair, split meta-arguments, validate,
// decode.
func BenchmarkPrepareCall(b *testing.B) {
	tools := []tool.Tool{editTool(), newRisky()}
	args := `{"security_risk":"LOW","summary":"view the parser","command":"view","path":"/src/parser.go","view_range":"[10, 40]"}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.PrepareCall(tools, "str_replace_editor", args, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseAction measures validation and decoding alone.
func BenchmarkParseAction(b *testing.B) {
	tl := editTool()
	args := json.RawMessage(`{"command":"insert","path":"/src/parser.go","insert_line":12,"file_text":"package parser\n"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tl.ParseAction(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatCompletionsFormat measures building one tool's schema as
// sent with every LLM request.
func BenchmarkChatCompletionsFormat(b *testing.B) {
	tl := editTool()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := event.MarshalJSON(tool.ChatCompletionsFormat(tl)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentUse runs a tool's methods from many goroutines; with -race
// it shows a tool may be shared by parallel tool calls.
func TestConcurrentUse(t *testing.T) {
	tl := editTool()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				a, err := tl.ParseAction(json.RawMessage(`{"command":"view","path":"/a"}`))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tl.Execute(context.Background(), a); err != nil {
					t.Error(err)
					return
				}
				tool.Parameters(tl)
				_ = tl.InputSchema()
			}
		})
	}
	wg.Wait()
}
