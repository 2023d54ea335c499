// Package llm is gohands' provider-neutral LLM layer: the LLM config (the
// reference's LLM object), one Completion call with streaming, retries,
// typed errors, cost and token accounting, model routing and fallback.
//
// Wire APIs live in their own packages, which register themselves:
// llm/openai (Chat Completions and Responses, and every OpenAI-compatible
// server), llm/anthropic and llm/gemini. Import the ones you use, or
// llm/providers for all. The model string picks the provider the way
// LiteLLM users write it: "openai/gpt-4o", "anthropic/claude-sonnet-4-5",
// "gemini/gemini-2.5-pro", "openrouter/...", or a bare name such as
// "gpt-4o" whose provider is inferred. The library never reads
// environment variables; applications pass keys in the Config.
package llm
