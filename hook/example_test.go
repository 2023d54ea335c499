package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gohands/gohands/hook"
)

// A PreToolUse hook that refuses "rm" commands by exiting with status 2.
func ExampleManager_PreToolUse() {
	cfg, err := hook.Parse([]byte(`{"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [
		{"type": "command", "command": "grep -q '\"rm ' && { echo 'no rm, please' >&2; exit 2; } || exit 0", "timeout": 10}
	]}]}}`))
	if err != nil {
		panic(err)
	}
	m := hook.NewManager(cfg, &hook.Runner{WorkDir: os.TempDir()})
	defer m.Runner.Close()
	for _, cmd := range []string{"ls -l", "rm -rf build"} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		out := m.PreToolUse(context.Background(), "terminal", args, "action-1")
		fmt.Printf("%s: blocked=%v", cmd, out.Blocked)
		if out.Blocked {
			fmt.Print(" (", out.Reason, ")")
		}
		fmt.Println()
	}
	// Output:
	// ls -l: blocked=false
	// rm -rf build: blocked=true (no rm, please)
}
