// Package providers registers every wire API gohands speaks with package
// llm. Import it for its side effect when the model is chosen at run time:
//
//	import _ "github.com/gohands/gohands/llm/providers"
//
// Applications that know their provider import only its package
// (llm/openai, llm/anthropic, llm/gemini or llm/bedrock) and build faster.
package providers

import (
	// Anthropic Messages.
	_ "github.com/gohands/gohands/llm/anthropic"
	// AWS Bedrock Converse.
	_ "github.com/gohands/gohands/llm/bedrock"
	// Gemini API.
	_ "github.com/gohands/gohands/llm/gemini"
	// OpenAI Chat Completions and Responses, and compatible servers.
	_ "github.com/gohands/gohands/llm/openai"
)
