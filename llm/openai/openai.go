// Package openai is the gohands provider for OpenAI's Chat Completions and
// Responses APIs, and for every server that speaks Chat Completions
// (OpenRouter, DeepSeek, Groq, Mistral, Together, xAI, Ollama, vLLM, LiteLLM
// proxies, ...). Importing it registers it with package llm.
//
// Requests are built here, in the shape the reference SDK sends (so
// fields such as reasoning_content, thinking_blocks and cache_control reach
// the servers that use them); the official openai-go client carries them,
// decodes replies and server-sent events, and reports HTTP errors. The
// client is always configured explicitly: no OPENAI_* environment variable
// is read.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gohands/gohands/llm"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func init() {
	llm.RegisterProvider(llm.APIChat, Chat{})
	llm.RegisterProvider(llm.APIResponses, Responses{})
}

// requestOptions are the client options of one call: where to send it, the
// key, the headers, no SDK retries (package llm retries) and the body.
func requestOptions(req *llm.Request, body []byte, path string) ([]option.RequestOption, error) {
	ep := req.Endpoint
	base := strings.TrimSuffix(ep.BaseURL, "/")
	if ep.Provider == "azure" {
		// Azure serves each deployment under its own path and wants an
		// api-version on every call.
		if path == "responses" {
			base += "/openai"
		} else {
			base += "/openai/deployments/" + url.PathEscape(ep.Model)
		}
	}
	if _, err := url.Parse(base); err != nil {
		return nil, fmt.Errorf("openai: base url: %w", err)
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(req.HTTPClient),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		// Whatever the environment held, the key is ours (or none).
		option.WithAPIKey(""),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithRequestBody("application/json", body),
	}
	if ep.Provider == "azure" && ep.APIVersion != "" {
		opts = append(opts, option.WithQuery("api-version", ep.APIVersion))
	}
	if key := req.Config.APIKey.Value(); key != "" {
		if ep.AuthHeader == "Authorization" && ep.AuthPrefix == "Bearer " {
			opts = append(opts, option.WithAPIKey(key))
		} else {
			opts = append(opts, option.WithHeader(ep.AuthHeader, ep.AuthPrefix+key))
		}
	}
	for k, v := range ep.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	if id := req.ConversationID; id != "" && sessionAware(ep.Provider) {
		opts = append(opts, option.WithHeader("x-litellm-session-id", id))
	}
	return opts, nil
}

// sessionAware reports whether the provider is a LiteLLM proxy, which
// groups calls by the x-litellm-session-id header.
func sessionAware(provider string) bool {
	return provider == "litellm_proxy" || provider == "openhands"
}

// cacheKeyAware reports whether the provider takes OpenAI's
// prompt_cache_key and prompt_cache_retention parameters.
func cacheKeyAware(provider string) bool {
	switch provider {
	case "openai", "azure", "litellm_proxy", "openhands":
		return true
	}
	return false
}

// mapError turns an SDK error into an llm.APIError when the server
// answered; transport errors are returned as they are for package llm to
// classify.
func mapError(err error) error {
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	var header http.Header
	if apiErr.Response != nil {
		header = apiErr.Response.Header
	}
	code := apiErr.Code
	if code == "" {
		code = apiErr.Type
	}
	msg := apiErr.Message
	if msg == "" {
		// Not an OpenAI-shaped error body: keep whatever the server said.
		msg = strings.TrimSpace(apiErr.RawJSON())
	}
	return llm.NewAPIError(apiErr.StatusCode, code, msg, header, err)
}

// responseCost reads the cost a LiteLLM proxy reports for a call.
func responseCost(resp *http.Response) float64 {
	if resp == nil {
		return 0
	}
	var cost float64
	if v := resp.Header.Get("x-litellm-response-cost"); v != "" {
		if err := json.Unmarshal([]byte(v), &cost); err != nil {
			return 0
		}
	}
	return cost
}

// marshalBody encodes a request body and merges the config's extra body
// keys into it (litellm_extra_body), which win over ours.
func marshalBody(v any, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	if len(extra) == 0 {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("openai: encoding litellm_extra_body[%q]: %w", k, err)
		}
		m[k] = raw
	}
	return json.Marshal(m)
}

// ctxErr prefers the context's error when the context ended, so a timeout
// reads as a timeout rather than as the transport's symptom of it.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}
