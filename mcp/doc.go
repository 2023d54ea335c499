// Package mcp turns the tools of MCP (Model Context Protocol) servers into
// tool.Tool values an agent can call, using the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A [Config] is the reference's mcp_config: a map from server names to
// [Server] values, read from the common {"mcpServers": {...}} file format
// by [LoadConfigFile]. [Connect] starts or connects to every enabled
// server (stdio, SSE or streamable HTTP), lists its tools and returns them
// in a [Set]; [Set.Close] shuts the servers down, stdio servers with their
// whole process group.
//
// Each tool call is an [Action] (kind MCPToolAction) and its result an
// [Observation] (kind MCPToolObservation). Text, images, embedded
// resources and resource links in a result become observation content;
// error results, protocol errors, timeouts and crashed servers become
// error observations, and a server that went away is reconnected on the
// next call.
//
// A remote server whose auth strategy is oauth2 (streamable HTTP) is
// reached with the access token of its [OAuthState], refreshed when it
// expires; [OAuthOptions] saves each new state and, when someone can
// authorize, runs the authorization code flow with PKCE. Package
// oauthtest serves a loopback authorization server and MCP server for
// tests.
//
// Only tools are used. Prompts, resources (other than those a tool
// returns), sampling, elicitation, roots, logging and progress
// notifications are not offered to the agent: the client advertises no
// capabilities, and log and progress notifications are ignored.
package mcp
