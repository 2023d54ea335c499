// Package mcp turns the tools of MCP (Model Context Protocol) servers into
// tool.Tool values an agent can call, using the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A [Config] is the reference's mcp_config: a map from server names to
// [Server] values, read from the common {"mcpServers": {...}} file format
// by [LoadConfigFile]. [Connect] starts or connects to every enabled
// server, lists its tools and returns them in a [Set]; [Set.Close] shuts
// the servers down.
package mcp
