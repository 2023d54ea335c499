package browser_test

import (
	"context"
	"fmt"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/browser"
)

// A Browser gives its tools to an agent; here they are called directly,
// as the agent loop does with a model's tool calls. Closing the browser
// (or any of its tools) stops Chromium.
func Example() {
	b := browser.New(&browser.Options{SaveDir: "/tmp/observations"})
	defer b.Close()
	tools := b.Tools()
	ctx := context.Background()
	for _, c := range []struct{ name, args string }{
		{browser.NavigateName, `{"url":"https://example.com"}`},
		{browser.GetStateName, `{"include_screenshot":true}`},
		{browser.GetContentName, `{}`},
	} {
		call, err := tool.PrepareCall(tools, c.name, c.args, true)
		if err != nil {
			panic(err)
		}
		obs, err := call.Tool.Execute(ctx, call.Action)
		if err != nil {
			panic(err)
		}
		fmt.Println(event.TextOf(event.ObservationContent(obs)))
	}
}
