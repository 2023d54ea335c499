// Package llmtest provides scripted fake LLM servers for tests. A Server
// answers each request with the next Reply of its script, in the real wire
// format of the endpoint called (OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages, Gemini), streamed as server-sent events when the
// client asks for a stream, and records every request for assertions.
//
// One Reply type drives every format, so one script can drive any
// provider: text, several tool calls, reasoning (with signatures and
// encrypted content), usage, HTTP errors in the provider's own error shape
// (rate limits with Retry-After, context-window errors), delays and
// dropped connections. A script that runs out fails the test.
package llmtest
