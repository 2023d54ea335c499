// Package llmtest provides scripted fake LLM servers for tests. A Server
// answers each request with the next Reply of its script, in the real wire
// format of the endpoint called, streamed as server-sent events when the
// client asks for a stream, and records every request for assertions.
//
// One Reply type drives every format, so one script can drive any
// provider: text, several tool calls, reasoning (with signatures and
// encrypted content), usage, HTTP errors in the provider's own error shape
// (rate limits with Retry-After, context-window errors, errors in the
// middle of a stream), delays and dropped connections. A script that runs
// out, a request to an endpoint the server does not serve and a body that
// is not JSON all fail the test.
//
// The formats and where clients find them (srv.URL is the server root):
//
//	NewChat       POST /v1/chat/completions, /chat/completions   base URL srv.URL+"/v1"
//	NewResponses  POST /v1/responses, /responses                 base URL srv.URL+"/v1"
//	NewAnthropic  POST /v1/messages                              base URL srv.URL
//	NewGemini     POST /v1beta/models/{m}:generateContent,
//	              :streamGenerateContent?alt=sse                 base URL srv.URL
//	New           all of the above, one shared script
//
// Streams are framed as each provider frames them: bare "data:" lines
// ending with "data: [DONE]" for Chat Completions, "event:" and "data:"
// lines for Responses and Anthropic, "data:" lines separated by CRLF CRLF
// for Gemini. The formats are pinned by golden files in testdata and were
// checked against the official Go SDKs and against the Python reference's
// LiteLLM client.
//
// A Playbook chooses each reply by the request instead of by arrival
// order (rules on the system prompt and the first and last user messages;
// the reply by the number of assistant turns), so one server can answer
// many concurrent conversations and side calls; NewResponder serves one,
// and the command cmd/llmtest serves a playbook file to programs that are
// not Go tests.
//
// Provider is the in-process alternative: an llm.Provider answering from
// the same Reply script without HTTP, for tests and benchmarks of code
// above the LLM.
package llmtest
