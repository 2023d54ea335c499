package bedrock_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	_ "github.com/gohands/gohands/llm/bedrock"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// Test keys: AWS's documentation example pair.
const (
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testToken  = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN//////////wEaDExampleToken"
	claude     = "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"
	claudeID   = "anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// isolate clears every AWS setting of the environment, so a test sees
// only what it sets.
func isolate(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_REGION_NAME", "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_BEDROCK_RUNTIME_ENDPOINT"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
}

// newLLM returns an LLM for model calling srv with the test keys,
// retrying without waits.
func newLLM(t *testing.T, srv *llmtest.Server, model string, edit func(*llm.Config)) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig(model)
	cfg.BaseURL = srv.URL
	cfg.AWSAccessKeyID, cfg.AWSSecretAccessKey = secret.New(testKeyID), secret.New(testSecret)
	cfg.AWSRegionName = "us-east-1"
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	if edit != nil {
		edit(&cfg)
	}
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// conversation is every message shape an agent sends: system prompt with
// a cache mark, user text and image, an assistant turn with signed
// thinking, text and two tool calls, their results (one with a
// screenshot), and a user follow-up.
func conversation() []event.Message {
	sig := "c2lnbmF0dXJl"
	return []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{{Type: event.ContentText, Text: "You are an agent.", CachePrompt: true}, event.Text("Workspace: /w")}},
		{Role: event.RoleUser, Content: event.List[event.Content]{event.Text("What is in the picture? Then list the files."), event.Image(llmtest.TinyPNG)}},
		{Role: event.RoleAssistant,
			ThinkingBlocks: []event.ThinkingBlock{{Thinking: "Let me look.", Signature: &sig}, {Redacted: true, Data: "cmVkYWN0ZWQ="}},
			Content:        event.List[event.Content]{event.Text("A red dot. Listing.")},
			ToolCalls: []event.ToolCall{
				{ID: "tooluse_1", Name: "terminal", Arguments: `{"command":"ls"}`},
				{ID: "tooluse_2", Name: "browser", Arguments: `{"url":"http://localhost"}`},
			}},
		{Role: event.RoleTool, ToolCallID: "tooluse_1", Name: "terminal", Content: event.List[event.Content]{event.Text("a.txt\nb.txt")}},
		{Role: event.RoleTool, ToolCallID: "tooluse_2", Name: "browser", Content: event.List[event.Content]{event.Text("loaded"), {Type: event.ContentImage, ImageURLs: []string{llmtest.TinyPNG}, CachePrompt: true}}},
		event.UserMessage("Go on."),
	}
}

var tools = []llm.ToolSpec{
	{Name: "terminal", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	{Name: "browser", Description: "Open a page.", Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
}

// TestConverse: a plain call goes to /model/{id}/converse with the model
// id escaped as the AWS SDKs escape it, in Converse's shape, and its reply
// comes back with text, signed thinking, tool calls and usage.
func TestConverse(t *testing.T) {
	isolate(t)
	srv := llmtest.NewBedrock(t, llmtest.Reply{
		Reasoning: "Thinking it over.", Signature: "sig-1", Text: "Here.",
		ToolCalls: []llmtest.ToolCall{{ID: "tooluse_9", Name: "terminal", Arguments: `{"command":"cat a.txt"}`}},
		Usage:     llmtest.Usage{PromptTokens: 120, CompletionTokens: 30, CacheReadTokens: 100},
	})
	l := newLLM(t, srv, claude, nil)
	r, err := l.Completion(context.Background(), conversation(), tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := srv.LastRequest()
	if req.Wire != llmtest.WireBedrock || req.Stream {
		t.Errorf("served as %s stream=%v", req.Wire, req.Stream)
	}
	if got := req.EscapedPath; got != "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse" {
		t.Errorf("path %s", got)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		System     []map[string]any `json:"system"`
		ToolConfig struct {
			Tools []map[string]any `json:"tools"`
		} `json:"toolConfig"`
		InferenceConfig map[string]any `json:"inferenceConfig"`
		Additional      map[string]any `json:"additionalModelRequestFields"`
	}
	if err := req.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var roles strings.Builder
	for _, m := range body.Messages {
		roles.WriteString(m.Role[:1])
	}
	if roles.String() != "uau" {
		t.Errorf("roles %s, want user, assistant, user (results and follow-up merged)", roles.String())
	}
	if len(body.System) != 3 || body.System[1]["cachePoint"] == nil {
		t.Errorf("system %v: want text, cache point, text", body.System)
	}
	last := body.Messages[2].Content
	if len(last) < 3 || last[0]["toolResult"] == nil || last[1]["toolResult"] == nil {
		t.Fatalf("last turn %v: want the two tool results first", last)
	}
	shot := last[1]["toolResult"].(map[string]any)["content"].([]any)
	if len(shot) != 2 || shot[1].(map[string]any)["image"] == nil {
		t.Errorf("screenshot result %v: want its text and the image", shot)
	}
	asst := body.Messages[1].Content
	if rc, ok := asst[0]["reasoningContent"].(map[string]any); !ok || rc["reasoningText"].(map[string]any)["signature"] != "c2lnbmF0dXJl" {
		t.Errorf("assistant turn %v: want the signed thinking first", asst)
	}
	if len(body.ToolConfig.Tools) != 2 || body.InferenceConfig["maxTokens"] == nil {
		t.Errorf("tools %v, inference %v", body.ToolConfig.Tools, body.InferenceConfig)
	}

	m := r.Message
	if event.TextOf(m.Content) != "Here." || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "tooluse_9" || m.ToolCalls[0].Arguments != `{"command":"cat a.txt"}` {
		t.Errorf("message %+v", m)
	}
	if len(m.ThinkingBlocks) != 1 || *m.ThinkingBlocks[0].Signature != "sig-1" || m.ReasoningContent != "Thinking it over." {
		t.Errorf("thinking %+v", m.ThinkingBlocks)
	}
	if u := r.Usage; u.PromptTokens != 120 || u.CacheReadTokens != 100 || u.CompletionTokens != 30 || r.FinishReason != "tool_calls" || r.ID == "" {
		t.Errorf("usage %+v, finish %s, id %q", u, r.FinishReason, r.ID)
	}
}

// TestConverseStream: a streamed call reads ConverseStream's event
// stream: reasoning, text and tool call fragments as they come, and the
// same message a plain call returns.
func TestConverseStream(t *testing.T) {
	isolate(t)
	reply := llmtest.Reply{
		Reasoning: "Which files?", Signature: "sig-2", Text: "Listing them now.",
		RedactedThinking: []string{"hidden"},
		ToolCalls:        []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls -la"}`}, {Name: "browser", Arguments: `{"url":"http://x"}`}},
		Usage:            llmtest.Usage{PromptTokens: 50, CompletionTokens: 20, CacheWriteTokens: 40},
	}
	srv := llmtest.NewBedrock(t, reply, reply)
	l := newLLM(t, srv, claude, nil)
	var text, reasoning strings.Builder
	args := map[int]string{}
	r, err := l.Completion(context.Background(), conversation(), tools, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		text.WriteString(d.Text)
		reasoning.WriteString(d.Reasoning)
		if c := d.ToolCall; c != nil {
			args[c.Index] += c.Arguments
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if req := srv.LastRequest(); !req.Stream || !strings.HasSuffix(req.EscapedPath, "/converse-stream") {
		t.Errorf("not streamed: %s", req.EscapedPath)
	}
	if text.String() != "Listing them now." || reasoning.String() != "Which files?" || args[0] != `{"command":"ls -la"}` || args[1] != `{"url":"http://x"}` {
		t.Errorf("deltas: text %q reasoning %q args %v", text.String(), reasoning.String(), args)
	}
	plain, err := l.Completion(context.Background(), conversation(), tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameMessage(r.Message, plain.Message) {
		t.Errorf("streamed %+v\nplain %+v", r.Message, plain.Message)
	}
	if len(r.Message.ThinkingBlocks) != 2 || !r.Message.ThinkingBlocks[1].Redacted || r.Usage.PromptTokens != 50 || r.Usage.CacheWriteTokens != 40 || r.FinishReason != "tool_calls" {
		t.Errorf("thinking %+v usage %+v finish %s", r.Message.ThinkingBlocks, r.Usage, r.FinishReason)
	}
}

func sameMessage(a, b event.Message) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	// Tool call ids are made up per request by the scripted server.
	return bytes.Equal(bytes.ReplaceAll(ja, []byte("llmtest1"), []byte("llmtest2")), jb)
}

// TestModelNames: the model strings LiteLLM accepts for Bedrock reach the
// Converse path of the right model id, in the right region.
func TestModelNames(t *testing.T) {
	isolate(t)
	for _, tc := range []struct{ model, path string }{
		{claude, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"},
		{"bedrock/converse/" + claudeID, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"},
		{"bedrock/invoke/" + claudeID, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"},
		{"bedrock/us.anthropic.claude-opus-4-1-20250805-v1:0", "/model/us.anthropic.claude-opus-4-1-20250805-v1%3A0/converse"},
		{"bedrock/amazon.nova-pro-v1:0", "/model/amazon.nova-pro-v1%3A0/converse"},
		{"bedrock/arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123", "/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Aapplication-inference-profile%2Fabc123/converse"},
	} {
		srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
		l := newLLM(t, srv, tc.model, func(c *llm.Config) { c.AWSRegionName = "" })
		if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		req := srv.LastRequest()
		region := "us-west-2"
		if strings.Contains(tc.model, "arn:") {
			region = "eu-west-1"
		}
		if req.EscapedPath != tc.path || !strings.Contains(req.Header.Get("Authorization"), "/"+region+"/bedrock/aws4_request") {
			t.Errorf("%s: path %s, auth %s; want %s in %s", tc.model, req.EscapedPath, req.Header.Get("Authorization"), tc.path, region)
		}
	}
	cfg := llm.DefaultConfig("bedrock/agent/my-agent")
	if _, err := llm.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "agent route is not supported") {
		t.Errorf("bedrock/agent/: %v, want a clear refusal", err)
	}
}

// TestCredentials: the keys are found where the AWS SDKs look, in their
// order; a Bedrock API key is a bearer token; no keys, a missing named
// profile and a profile gohands cannot use are clear errors, not sent.
func TestCredentials(t *testing.T) {
	const (
		envID, fileID, confID, profID = "AKIDFROMENV", "AKIDFROMFILE", "AKIDFROMCONFIG", "AKIDFROMPROFILE"
	)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, credFile, confFile string)
		edit  func(*llm.Config)
		want  string // the key id signed with, "Bearer x", or an error's text
	}{
		{"config", nil, func(c *llm.Config) {
			c.AWSAccessKeyID, c.AWSSecretAccessKey = secret.New(testKeyID), secret.New(testSecret)
		}, testKeyID},
		{"environment", func(t *testing.T, _, _ string) {
			t.Setenv("AWS_ACCESS_KEY_ID", envID)
			t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
		}, nil, envID},
		{"credentials file", func(t *testing.T, cred, _ string) {
			write(t, cred, "[other]\naws_access_key_id = X\naws_secret_access_key = Y\n\n[default]\naws_access_key_id = "+fileID+"\naws_secret_access_key = s\n")
		}, nil, fileID},
		{"config file", func(t *testing.T, _, conf string) {
			write(t, conf, "[default]\nregion = us-east-2\naws_access_key_id = "+confID+"\naws_secret_access_key = s\n")
		}, nil, confID},
		{"AWS_PROFILE", func(t *testing.T, cred, conf string) {
			t.Setenv("AWS_PROFILE", "work")
			write(t, cred, "[default]\naws_access_key_id = WRONG\naws_secret_access_key = s\n")
			write(t, conf, "[profile work]\naws_access_key_id = "+profID+"\naws_secret_access_key = s\n")
		}, nil, profID},
		{"aws_profile_name over the environment", func(t *testing.T, cred, _ string) {
			t.Setenv("AWS_ACCESS_KEY_ID", envID)
			t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
			write(t, cred, "[work]\naws_access_key_id = "+profID+"\naws_secret_access_key = s\n")
		}, func(c *llm.Config) { c.AWSProfileName = "work" }, profID},
		{"credential_process", func(t *testing.T, _, conf string) {
			dir := filepath.Join(t.TempDir(), "a dir")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "creds.sh")
			write(t, script, `printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "s", "SessionToken": "t", "Expiration": "2999-01-01T00:00:00Z"}' "$1"`)
			write(t, conf, "[profile proc]\ncredential_process = /bin/sh \""+script+"\" AKIDFROMPROCESS\n")
		}, func(c *llm.Config) { c.AWSProfileName = "proc" }, "AKIDFROMPROCESS"},
		{"failing credential_process", func(t *testing.T, _, conf string) {
			write(t, conf, "[profile proc]\ncredential_process = /bin/sh -c 'echo the SSO session has expired >&2; exit 3'\n")
		}, func(c *llm.Config) { c.AWSProfileName = "proc" }, "the SSO session has expired"},
		{"api key", nil, func(c *llm.Config) { c.APIKey = secret.New("bedrock-api-key") }, "Bearer bedrock-api-key"},
		{"AWS_BEARER_TOKEN_BEDROCK", func(t *testing.T, _, _ string) { t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "env-api-key") }, nil, "Bearer env-api-key"},
		{"none", nil, nil, "no AWS credentials: set aws_access_key_id"},
		{"missing profile", nil, func(c *llm.Config) { c.AWSProfileName = "nope" }, `AWS profile "nope" is in neither`},
		{"sso profile", func(t *testing.T, _, conf string) {
			ssoSetup(t, conf, "111122223333", time.Now().Add(time.Hour))
		}, func(c *llm.Config) { c.AWSProfileName = "dev" }, "AKIDFROMSSO"},
		{"sso login expired", func(t *testing.T, _, conf string) {
			ssoSetup(t, conf, "444455556666", time.Now().Add(-time.Minute))
		}, func(c *llm.Config) { c.AWSProfileName = "dev" }, "the SSO login has expired: run aws sso login --profile dev"},
		{"sso session undefined", func(t *testing.T, _, conf string) {
			write(t, conf, "[profile sso]\nsso_session = corp\nsso_account_id = 1\n")
		}, func(c *llm.Config) { c.AWSProfileName = "sso" }, `names sso_session "corp", which`},
		{"role profile", func(t *testing.T, _, conf string) {
			write(t, conf, "[profile r]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n")
		}, func(c *llm.Config) { c.AWSProfileName = "r" }, "gets its keys with role_arn, which gohands does not support"},
		{"aws_role_name", func(t *testing.T, _, _ string) { stsServer(t) }, func(c *llm.Config) {
			c.AWSAccessKeyID, c.AWSSecretAccessKey, c.AWSRoleName, c.AWSSessionName = secret.New(testKeyID), secret.New(testSecret), "arn:aws:iam::123456789012:role/bedrock", "s1"
		}, "AKIDFROMROLE"},
		{"aws_role_name refused", func(t *testing.T, _, _ string) { stsServer(t) }, func(c *llm.Config) {
			c.AWSAccessKeyID, c.AWSSecretAccessKey, c.AWSRoleName = secret.New(testKeyID), secret.New(testSecret), "arn:aws:iam::123456789012:role/other"
		}, "STS refused to assume role arn:aws:iam::123456789012:role/other with AWS credentials from the config (HTTP 403 AccessDenied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			if tc.setup != nil {
				tc.setup(t, os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), os.Getenv("AWS_CONFIG_FILE"))
			}
			srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
			l := newLLM(t, srv, claude, func(c *llm.Config) {
				c.AWSAccessKeyID, c.AWSSecretAccessKey = secret.String{}, secret.String{}
				c.NumRetries = 1
				if tc.edit != nil {
					tc.edit(c)
				}
			})
			_, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
			if strings.HasPrefix(tc.want, "AKID") || strings.HasPrefix(tc.want, "Bearer") {
				if err != nil {
					t.Fatal(err)
				}
				auth := srv.LastRequest().Header.Get("Authorization")
				if !strings.Contains(auth, "Credential="+tc.want+"/") && auth != tc.want {
					t.Errorf("Authorization %q, want %s", auth, tc.want)
				}
				return
			}
			if !errors.Is(err, llm.ErrAuthentication) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrAuthentication saying %q", err, tc.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent without credentials", n)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRegion: the region comes from the config, the model's ARN, then
// AWS_REGION_NAME, AWS_REGION, AWS_DEFAULT_REGION, the profile, else
// us-west-2; the runtime endpoint from the config or
// AWS_BEDROCK_RUNTIME_ENDPOINT when base_url is unset.
func TestRegion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		conf  string
		edit  func(*llm.Config)
		model string
		want  string
	}{
		{"default", nil, "", nil, claude, "us-west-2"},
		{"config", map[string]string{"AWS_REGION": "eu-north-1"}, "", func(c *llm.Config) { c.AWSRegionName = "ap-south-1" }, claude, "ap-south-1"},
		{"arn", map[string]string{"AWS_REGION": "eu-north-1"}, "", nil, "bedrock/arn:aws:bedrock:ca-central-1:1:inference-profile/x", "ca-central-1"},
		{"AWS_REGION_NAME", map[string]string{"AWS_REGION_NAME": "us-east-2", "AWS_REGION": "eu-north-1"}, "", nil, claude, "us-east-2"},
		{"AWS_REGION", map[string]string{"AWS_REGION": "eu-north-1", "AWS_DEFAULT_REGION": "sa-east-1"}, "", nil, claude, "eu-north-1"},
		{"AWS_DEFAULT_REGION", map[string]string{"AWS_DEFAULT_REGION": "sa-east-1"}, "[default]\nregion = me-south-1\n", nil, claude, "sa-east-1"},
		{"profile", nil, "[default]\nregion = me-south-1\n", nil, claude, "me-south-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.conf != "" {
				write(t, os.Getenv("AWS_CONFIG_FILE"), tc.conf)
			}
			srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
			l := newLLM(t, srv, tc.model, func(c *llm.Config) {
				c.AWSRegionName = ""
				c.BaseURL = ""
				c.AWSBedrockRuntimeEndpoint = srv.URL
				if tc.edit != nil {
					tc.edit(c)
				}
			})
			if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
				t.Fatal(err)
			}
			if auth := srv.LastRequest().Header.Get("Authorization"); !strings.Contains(auth, "/"+tc.want+"/bedrock/aws4_request") {
				t.Errorf("signed for %s, want %s", auth, tc.want)
			}
		})
	}
	t.Run("AWS_BEDROCK_RUNTIME_ENDPOINT", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "ok"})
		t.Setenv("AWS_BEDROCK_RUNTIME_ENDPOINT", srv.URL)
		l := newLLM(t, srv, claude, func(c *llm.Config) { c.BaseURL = "" })
		if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bad region", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewBedrock(t)
		l := newLLM(t, srv, claude, func(c *llm.Config) { c.AWSRegionName = "us-east-1/../x" })
		if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err == nil || !strings.Contains(err.Error(), "not a region name") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestConformance: retries, refusals, timeouts and broken streams behave
// as on every provider; Bedrock's own refusals map to their kinds.
func TestConformance(t *testing.T) {
	isolate(t)
	llmtest.Conformance(t, llmtest.ProviderCase{
		Server: llmtest.NewBedrock,
		LLM: func(t *testing.T, srv *llmtest.Server, edit func(*llm.Config)) *llm.LLM {
			return newLLM(t, srv, claude, edit)
		},
		NotRetried: []llmtest.Refusal{
			{Reply: llmtest.Fail(403, "The security token included in the request is invalid."), Kind: llm.ErrAuthentication},
			{Reply: llmtest.Fail(400, "messages.0: text field is blank"), Kind: llm.ErrBadRequest},
		},
	})
}

// TestStreamException: an exception sent inside the event stream (after
// a 200) fails the call with its kind: a throttling one is a rate limit,
// retried when nothing had reached the caller.
func TestStreamException(t *testing.T) {
	isolate(t)
	srv := llmtest.NewBedrock(t,
		llmtest.Reply{Fail: &llmtest.Failure{Status: 429, Message: "Too many tokens, please wait before trying again.", MidStream: true}},
		llmtest.Reply{Text: "after the wait"})
	l := newLLM(t, srv, claude, func(c *llm.Config) { c.NumRetries = 2 })
	r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }})
	if err != nil || event.TextOf(r.Message.Content) != "after the wait" || len(srv.Requests()) != 2 {
		t.Fatalf("%v, %d requests", err, len(srv.Requests()))
	}
	srv = llmtest.NewBedrock(t, llmtest.Reply{Text: "partial", Fail: &llmtest.Failure{Status: 400, Message: "bad", MidStream: true}})
	_, err = newLLM(t, srv, claude, nil).Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }})
	var api *llm.APIError
	if !errors.As(err, &api) || api.Code != "ValidationException" || !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("err = %v (%+v)", err, api)
	}
}

// TestSecretsStayOut: the secret key, the session token, a Bedrock API
// key and the request signature reach no log line, no completion log and
// no error, even when the server quotes the canonical request back (AWS's
// SignatureDoesNotMatch does, session token included).
func TestSecretsStayOut(t *testing.T) {
	isolate(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	folder := t.TempDir()
	quoted := "The request signature we calculated does not match the signature you provided. The Canonical String for this request should have been 'POST\n/model/x/converse\n\ncontent-type:application/json\nx-amz-security-token:" + testToken + "\n'"
	srv := llmtest.NewBedrock(t,
		llmtest.Reply{Text: "fine", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}}},
		llmtest.Reply{Fail: &llmtest.Failure{Status: 403, Message: quoted}},
		llmtest.Fail(503, "down"), llmtest.Fail(503, "down"),
		llmtest.Reply{Fail: &llmtest.Failure{Status: 401, Message: "bad key bedrock-api-key-secret"}},
	)
	mk := func(edit func(*llm.Config)) *llm.LLM {
		cfg := llm.DefaultConfig(claude)
		cfg.BaseURL, cfg.AWSRegionName = srv.URL, "us-east-1"
		cfg.AWSAccessKeyID, cfg.AWSSecretAccessKey, cfg.AWSSessionToken = secret.New(testKeyID), secret.New(testSecret), secret.New(testToken)
		cfg.LogCompletions, cfg.LogCompletionsFolder = true, folder
		cfg.NumRetries, cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 2, 0, 0, 0
		if edit != nil {
			edit(&cfg)
		}
		l, err := llm.New(cfg, &llm.Options{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	var errs []string
	msgs := []event.Message{event.UserMessage("hi")}
	l := mk(nil)
	if _, err := l.Completion(context.Background(), msgs, tools, &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the quoted refusal, then two 503s with a retry
		_, err := l.Completion(context.Background(), msgs, tools, nil)
		if err == nil {
			t.Fatal("want an error")
		}
		errs = append(errs, err.Error())
	}
	if !strings.Contains(errs[0], "x-amz-security-token:[redacted]") {
		t.Errorf("the quoted canonical request lost more than the token: %s", errs[0])
	}
	_, err := mk(func(c *llm.Config) { c.APIKey = secret.New("bedrock-api-key-secret") }).Completion(context.Background(), msgs, nil, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	errs = append(errs, err.Error())

	var signatures []string
	for _, r := range srv.Requests() {
		if _, sig, ok := strings.Cut(r.Header.Get("Authorization"), "Signature="); ok {
			signatures = append(signatures, sig)
		}
	}
	if len(signatures) < 4 {
		t.Fatalf("%d signed requests", len(signatures))
	}
	var files bytes.Buffer
	entries, _ := os.ReadDir(folder)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(folder, e.Name()))
		files.Write(b)
	}
	if len(entries) < 3 || logs.Len() == 0 {
		t.Fatalf("%d completion logs, %d bytes of logs: the check would see nothing", len(entries), logs.Len())
	}
	for _, s := range append([]string{testSecret, testToken, "bedrock-api-key-secret"}, signatures...) {
		for where, text := range map[string]string{"logs": logs.String(), "completion logs": files.String(), "errors": strings.Join(errs, "\n")} {
			if strings.Contains(text, s) {
				t.Errorf("%s hold the secret %.12s…", where, s)
			}
		}
	}
}

// TestStreamIdleAfterText: a ConverseStream that stalls after text is cut
// by stream_idle_timeout (the event stream is watched like SSE) and
// retried, the caller told to drop what it got.
func TestStreamIdleAfterText(t *testing.T) {
	isolate(t)
	srv := llmtest.NewBedrock(t, llmtest.Reply{Text: "the start of an answer that stalls", StallAfter: 3}, llmtest.Reply{Text: "a whole answer"})
	// 1 s, not less: the retry streams at once, but a starved reader on a
	// loaded machine can see a gap of a few hundred milliseconds.
	l := newLLM(t, srv, claude, func(c *llm.Config) { c.StreamIdleTimeout, c.NumRetries = new(1.0), 2 })
	var text strings.Builder
	restarts := 0
	r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		if d.Restart {
			restarts++
			text.Reset()
		}
		text.WriteString(d.Text)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(r.Message.Content) != "a whole answer" || text.String() != "a whole answer" || restarts != 1 || len(srv.Requests()) != 2 {
		t.Errorf("reply %q, streamed %q, %d restarts, %d requests", event.TextOf(r.Message.Content), text.String(), restarts, len(srv.Requests()))
	}
}

// ssoSetup writes an IAM Identity Center profile "dev" (session "corp")
// for a role of account (role keys are cached by account and role),
// the token "aws sso login" caches (expiring at exp) under a fresh HOME,
// and points AWS_ENDPOINT_URL_SSO at a portal that trades that token
// for the role's keys.
func ssoSetup(t *testing.T, conf, account string, exp time.Time) {
	t.Helper()
	const token = "sso-access-token-abcdefgh"
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, conf, "[profile dev]\nsso_session = corp\nsso_account_id = "+account+"\nsso_role_name = Dev\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n")
	// The cache file is named by the SHA-1 of the session's name.
	dir := filepath.Join(home, ".aws", "sso", "cache")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte("corp"))
	write(t, filepath.Join(dir, hex.EncodeToString(sum[:])+".json"), `{"startUrl":"https://corp.awsapps.com/start","region":"eu-west-1","accessToken":"`+token+`","expiresAt":"`+exp.UTC().Format(time.RFC3339)+`"}`)
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/federation/credentials" || q.Get("account_id") != account || q.Get("role_name") != "Dev" || r.Header.Get("x-amz-sso_bearer_token") != token {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Session token not found or invalid"}`))
			return
		}
		fmt.Fprintf(w, `{"roleCredentials":{"accessKeyId":"AKIDFROMSSO","secretAccessKey":"s","sessionToken":"t","expiration":%d}}`, time.Now().Add(time.Hour).UnixMilli())
	}))
	t.Cleanup(portal.Close)
	t.Setenv("AWS_ENDPOINT_URL_SSO", portal.URL)
}

// stsServer starts a scripted STS that lets the test keys assume
// arn:aws:iam::123456789012:role/bedrock (signed for us-east-1) and
// refuses any other role, points AWS_ENDPOINT_URL_STS at it, and returns
// the forms it received.
func stsServer(t *testing.T) *[]url.Values {
	t.Helper()
	var mu sync.Mutex
	var forms []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		forms = append(forms, r.PostForm)
		mu.Unlock()
		auth := r.Header.Get("Authorization")
		f := r.PostForm
		if f.Get("Action") != "AssumeRole" || f.Get("Version") != "2011-06-15" || f.Get("RoleSessionName") == "" ||
			!strings.Contains(auth, "Credential="+testKeyID+"/") || !strings.Contains(auth, "/us-east-1/sts/aws4_request") ||
			f.Get("RoleArn") != "arn:aws:iam::123456789012:role/bedrock" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User is not authorized to perform: sts:AssumeRole</Message></Error><RequestId>r</RequestId></ErrorResponse>`)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><AssumedRoleUser><AssumedRoleId>AROA:%[1]s</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/bedrock/%[1]s</Arn></AssumedRoleUser><Credentials><AccessKeyId>AKIDFROMROLE</AccessKeyId><SecretAccessKey>role-secret-key-material</SecretAccessKey><SessionToken>role-session-token-material</SessionToken><Expiration>%[2]s</Expiration></Credentials></AssumeRoleResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></AssumeRoleResponse>`,
			f.Get("RoleSessionName"), time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", srv.URL)
	return &forms
}
