// Package llm is gohands' provider-neutral LLM layer: the LLM config (the
// reference's LLM object), one Completion call with streaming, retries,
// typed errors, cost and token accounting, a registry by usage id, model
// routing and fallback.
//
// Wire APIs live in their own packages, which register themselves:
// llm/openai (Chat Completions and Responses, and every OpenAI-compatible
// server), llm/anthropic and llm/gemini. Import the ones you use, or
// llm/providers for all of them. The library never reads environment
// variables; applications pass keys and URLs in the Config.
//
// # Model strings
//
// The model string picks the provider the way LiteLLM users write it. The
// prefix before the first "/" names the provider, the rest is the model
// name sent on the wire:
//
//	openai/        api.openai.com/v1, Bearer key. Chat Completions, or the
//	               Responses API for the gpt-5 and codex-mini families
//	               (api_mode "chat"/"responses" overrides)
//	azure/         base_url required; /openai/deployments/{name}, api-key
//	               header, api-version (default 2024-12-01-preview)
//	anthropic/     api.anthropic.com, x-api-key (Messages API)
//	gemini/        generativelanguage.googleapis.com, x-goog-api-key
//	openrouter/    openrouter.ai/api/v1 (+ HTTP-Referer and X-Title)
//	deepseek/      api.deepseek.com/v1
//	groq/          api.groq.com/openai/v1
//	mistral/       api.mistral.ai/v1
//	together_ai/   api.together.xyz/v1
//	xai/           api.x.ai/v1
//	ollama/        localhost:11434/v1 (ollama_base_url overrides)
//	litellm_proxy/ base_url required (a LiteLLM proxy; Responses too)
//	openhands/     the OpenHands LLM proxy
//	fireworks_ai/, moonshot/, cerebras/, deepinfra/, perplexity/,
//	lm_studio/, hosted_vllm/ (base_url required)
//
// All but anthropic/ and gemini/ speak Chat Completions. A bare name is
// inferred (gpt-*, o1/o3/o4*, codex-* → openai; claude-* → anthropic;
// gemini-* → gemini; mistral/codestral/devstral-* → mistral; deepseek-* →
// deepseek; grok-* → xai). Any other model with a base_url is sent, whole,
// to that URL as an OpenAI-compatible server. RegisterRoute adds prefixes.
//
// # Not supported yet
//
// AWS Bedrock and Vertex AI (the aws_* fields are carried but unused),
// calls with a ChatGPT subscription login (package subscription signs in
// and refreshes; no provider sends with it yet), resizing images for
// providers' limits, and LiteLLM's
// provider-specific parameter rewriting (for instance reasoning_effort
// becoming thinking for DeepSeek). Ollama is reached through its
// OpenAI-compatible endpoint rather than its native API.
package llm
