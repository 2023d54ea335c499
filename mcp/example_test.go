package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/gohands/gohands/mcp"
)

// A configuration in the common MCP client format; secrets stay redacted
// when it is written back.
func ExampleParseConfig() {
	cfg, err := mcp.ParseConfig([]byte(`{"mcpServers": {
		"github": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ghp_x"}},
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "timeout": 60}
	}}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"files", "github"} {
		s := cfg[name]
		fmt.Println(name, s.EffectiveTransport(), s.Timeout)
	}
	out, _ := json.Marshal(cfg)
	fmt.Println(string(out))
	// Output:
	// files stdio 1m0s
	// github http 0s
	// {"files":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],"timeout":60.0,"enabled":true},"github":{"url":"https://api.example.com/mcp","headers":{"Authorization":"**********"},"enabled":true}}
}

// Connecting to the servers of a configuration and handing their tools to
// an agent (agent.Options.ExtraTools).
func ExampleConnect() {
	ctx := context.Background()
	cfg, err := mcp.LoadConfigFile("mcp.json")
	if err != nil {
		log.Fatal(err)
	}
	set, err := mcp.Connect(ctx, cfg, &mcp.Options{Reserved: []string{"finish", "think"}})
	if err != nil {
		log.Print(err) // the servers that failed; the others are in set
	}
	defer set.Close()
	for _, t := range set.Tools() {
		fmt.Println(t.Name())
	}
}
