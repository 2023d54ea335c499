package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkEchoStdio measures one tool call through a stdio server: parse,
// JSON-RPC round trip, observation.
func BenchmarkEchoStdio(b *testing.B) {
	set := connect(b, Config{"everything": everythingStdio(b)}, nil)
	echo := findTool(b, set, "echo")
	args := json.RawMessage(`{"message": "benchmark"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a, err := echo.ParseAction(args)
		if err != nil {
			b.Fatal(err)
		}
		o, err := echo.Execute(ctx, a)
		if err != nil || o.Obs().IsError {
			b.Fatal(o, err)
		}
	}
}
