package preset_test

import (
	"fmt"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tools/preset"
)

func ExampleDefaultAgent() {
	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	a := preset.DefaultAgent(cfg, nil)
	fmt.Println(a.ToolNames())
	// Output: [terminal file_editor task_tracker finish think]
}
