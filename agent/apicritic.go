package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/wire"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// apiCriticConfig is the reference's APIBasedCritic configuration: a
// classifier model served behind a /classify endpoint (vLLM's) that
// predicts, from the rendered conversation, the probability of success
// and of known failure patterns.
type apiCriticConfig struct {
	ServerURL       string   `json:"server_url"`
	ModelName       string   `json:"model_name"`
	PassTools       *bool    `json:"pass_tools_definitions"`
	TimeoutSeconds  *float64 `json:"timeout_seconds"`
	HasSuccessLabel *bool    `json:"has_success_label"`
	IssueThreshold  *float64 `json:"issue_threshold"`
}

// criticClient sends the classifier's requests (not http.DefaultClient,
// which other code may change); the config's timeout bounds each call.
var criticClient = &http.Client{}

// The reference's defaults.
const (
	defaultCriticServer = "https://llm-proxy.app.all-hands.dev/vllm"
	defaultCriticModel  = "critic"
)

// The classifier's label space, in the order of its output (the
// reference's).
var (
	criticSentiment  = []string{"sentiment_positive", "sentiment_neutral", "sentiment_negative"}
	criticAgentIssue = []string{"misunderstood_intention", "did_not_follow_instruction", "insufficient_analysis",
		"insufficient_clarification", "improper_tool_use_or_setup", "loop_behavior", "insufficient_testing",
		"insufficient_debugging", "incomplete_implementation", "file_management_errors", "scope_creep",
		"risky_actions_or_permission", "other_agent_issue"}
	criticInfra = []string{"infrastructure_external_issue", "infrastructure_agent_caused_issue"}
	criticUser  = []string{"clarification_or_restatement", "correction", "direction_change", "vcs_update_requests",
		"progress_or_scope_concern", "frustration_or_complaint", "removal_or_reversion_request", "other_user_issue"}
)

func (c *apiCriticConfig) labels() []string {
	l := slices.Concat(criticSentiment, criticAgentIssue, criticInfra, criticUser)
	if c.HasSuccessLabel == nil || *c.HasSuccessLabel {
		l = append([]string{"success"}, l...)
	}
	return l
}

// criticFeature is a predicted label worth showing (probability of at
// least 0.2, as the reference shows them).
type criticFeature struct {
	Name        string  `json:"name"`
	DisplayName string  `json:"display_name"`
	Probability float64 `json:"probability"`
}

// criticAPIKey returns the api_key of a critic configuration, "" if it has
// none or only a redacted one.
func criticAPIKey(raw json.RawMessage) string {
	var c struct {
		APIKey *string `json:"api_key"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.APIKey == nil {
		return ""
	}
	k := strings.TrimSpace(*c.APIKey)
	if strings.Trim(k, "*") == "" {
		return ""
	}
	return k
}

// criticSecret is the critic's api_key: as MapSecrets left it, or as the
// configuration gives it.
func (a *Agent) criticSecret() secret.String {
	if !a.criticKey.IsZero() {
		return a.criticKey
	}
	return secret.New(criticAPIKey(a.Critic))
}

// withCriticKey returns the critic configuration raw with its api_key
// written as k encodes (member order kept).
func withCriticKey(raw json.RawMessage, k secret.String) (json.RawMessage, error) {
	kv, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	err = wire.ScanObject(raw, func(key, val []byte) error {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(string(key))
		b.Write(kb)
		b.WriteByte(':')
		if string(key) == "api_key" {
			val = kv
		}
		b.Write(val)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("agent: critic: %w", err)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// apiCritique asks the classifier about the run. The conversation is the
// model's view rendered as ChatML (the chat format of the reference's
// default classifier, a Qwen model) with the tool definitions.
func (r *runner) apiCritique(ctx context.Context, raw json.RawMessage) (critique, error) {
	var c apiCriticConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return critique{}, fmt.Errorf("agent: APIBasedCritic: %w", err)
	}
	key := r.a.criticSecret().Value()
	if key == "" {
		return critique{}, errors.New("agent: APIBasedCritic: api_key must be non-empty")
	}
	view, err := r.sess.View()
	if err != nil {
		return critique{}, err
	}
	var tools []llm.ToolSpec
	if c.PassTools == nil || *c.PassTools {
		tools = r.specs
	}
	if len(r.specs) == 0 {
		return critique{}, errors.New("agent: APIBasedCritic: the agent has no tools to describe")
	}
	input, err := renderChatML(event.LLMMessages(view), tools)
	if err != nil {
		return critique{}, err
	}
	probs, err := c.classify(ctx, key, input)
	if err != nil {
		return critique{}, err
	}
	labels := c.labels()
	if len(probs) != len(labels) {
		return critique{}, fmt.Errorf("agent: APIBasedCritic: %d probabilities for %d labels", len(probs), len(labels))
	}
	byLabel := make(map[string]float64, len(labels))
	for i, l := range labels {
		byLabel[l] = probs[i]
	}
	score, ok := byLabel["success"]
	if !ok {
		return critique{}, errors.New("agent: APIBasedCritic: the classifier has no success label")
	}
	res := critique{Score: score, Message: fmt.Sprintf("Success: %.2f", score)}
	issueThreshold := 0.75
	if c.IssueThreshold != nil {
		issueThreshold = *c.IssueThreshold
	}
	groups := []struct {
		title  string
		labels []string
	}{
		{"Likely problems in the agent's work", criticAgentIssue},
		{"What the user would likely ask next", criticUser},
		{"Infrastructure problems", criticInfra},
	}
	for gi, g := range groups {
		var fs []criticFeature
		for _, l := range g.labels {
			if p := byLabel[l]; p >= 0.2 {
				fs = append(fs, criticFeature{l, displayName(l), p})
			}
		}
		slices.SortStableFunc(fs, func(a, b criticFeature) int { return cmp.Compare(b.Probability, a.Probability) })
		if len(fs) == 0 {
			continue
		}
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = fmt.Sprintf("%s (%.0f%%)", f.DisplayName, f.Probability*100)
			// Like the reference, a likely agent issue asks for
			// another iteration whatever the score.
			if gi == 0 && f.Probability >= issueThreshold {
				res.Refine = true
			}
		}
		res.Details = append(res.Details, g.title+": "+strings.Join(parts, ", "))
	}
	return res, nil
}

// displayName is a label as people read it: loop_behavior → Loop Behavior.
func displayName(label string) string {
	words := strings.Split(label, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// classify posts input to the classifier and returns its probabilities.
// A 500 is tried up to three times, as the reference does.
func (c *apiCriticConfig) classify(ctx context.Context, key, input string) ([]float64, error) {
	timeout := 300 * time.Second
	if c.TimeoutSeconds != nil && *c.TimeoutSeconds > 0 {
		timeout = time.Duration(*c.TimeoutSeconds * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(map[string]string{"model": cmp.Or(c.ModelName, defaultCriticModel), "input": input})
	if err != nil {
		return nil, err
	}
	url := strings.TrimRight(cmp.Or(c.ServerURL, defaultCriticServer), "/") + "/classify"
	var resp struct {
		Data []struct {
			Probs      []float64 `json:"probs"`
			NumClasses *int      `json:"num_classes"`
		} `json:"data"`
	}
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := criticClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("agent: APIBasedCritic: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("agent: APIBasedCritic: %w", err)
		}
		if res.StatusCode == http.StatusInternalServerError && attempt < 3 {
			select {
			case <-time.After(time.Duration(1<<(attempt-1)) * time.Second):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if res.StatusCode/100 != 2 {
			return nil, fmt.Errorf("agent: APIBasedCritic: %s answered %s", url, res.Status)
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return nil, fmt.Errorf("agent: APIBasedCritic: %w", err)
		}
		break
	}
	if len(resp.Data) == 0 || len(resp.Data[0].Probs) == 0 {
		return nil, errors.New("agent: APIBasedCritic: no probabilities in the answer")
	}
	d := resp.Data[0]
	if d.NumClasses != nil && *d.NumClasses != len(d.Probs) {
		return nil, fmt.Errorf("agent: APIBasedCritic: num_classes %d but %d probabilities", *d.NumClasses, len(d.Probs))
	}
	if slices.ContainsFunc(d.Probs, math.IsNaN) {
		return nil, errors.New("agent: APIBasedCritic: NaN probability")
	}
	return d.Probs, nil
}

// renderChatML renders messages in the ChatML layout of Qwen's chat
// template, which the reference's default classifier was trained on:
// the tools in the system turn, each message's text only (the reference
// drops tool calls before rendering), consecutive tool results in one
// user turn.
func renderChatML(msgs []event.Message, tools []llm.ToolSpec) (string, error) {
	var b strings.Builder
	turn := func(role, text string) {
		b.WriteString("<|im_start|>" + role + "\n" + text + "<|im_end|>\n")
	}
	if len(msgs) > 0 && msgs[0].Role == event.RoleSystem {
		if len(tools) == 0 {
			turn("system", event.TextOf(msgs[0].Content))
		}
	}
	if len(tools) > 0 {
		var sys strings.Builder
		if len(msgs) > 0 && msgs[0].Role == event.RoleSystem {
			sys.WriteString(event.TextOf(msgs[0].Content) + "\n\n")
		}
		sys.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
			"You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
		for _, t := range tools {
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(`{}`)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			type fn struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			}
			err := enc.Encode(struct {
				Type     string `json:"type"`
				Function fn     `json:"function"`
			}{"function", fn{t.Name, t.Description, params}})
			if err != nil {
				return "", err
			}
			sys.WriteString("\n" + strings.TrimSpace(buf.String()))
		}
		sys.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
			"<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
		turn("system", sys.String())
	}
	for i, m := range msgs {
		text := event.TextOf(m.Content)
		switch {
		case m.Role == event.RoleSystem && i == 0:
		case m.Role == event.RoleTool:
			if i == 0 || msgs[i-1].Role != event.RoleTool {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + text + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != event.RoleTool {
				b.WriteString("<|im_end|>\n")
			}
		default:
			turn(string(m.Role), text)
		}
	}
	return b.String(), nil
}
