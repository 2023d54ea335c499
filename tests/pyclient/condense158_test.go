package pyclient_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// TestCondense158 has a reference 1.58.2 server and gohands serve condense
// the same conversation (two terminal commands and a finish, then POST
// /condense) with an LLMSummarizingCondenser on the scripted model, on
// Chat Completions and on the Responses API, and compares the summary
// request's layout, not its words: the roles and number of messages (a
// system message with the instructions, then one user message with the
// events), that every forgotten event's text is in the user message and
// none in the instructions, one <EVENT> block per forgotten event, the
// request's parameters (store=false on Responses, no tools, not streamed);
// and the Condensation event each stores (its fields, the forgotten events'
// kinds, summary, offset, the summary response's id).
func TestCondense158(t *testing.T) {
	t.Parallel()

	const summary = "SUMMARY: two echoes ran"
	var mu sync.Mutex
	summaries := map[string][]llmtest.Request{} // by conversation mark
	m := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		raw := plainBody(r) // Go's encoder writes < as \u003c
		mark := ""
		for _, k := range []string{"#cond-ref-chat", "#cond-go-chat", "#cond-ref-resp", "#cond-go-resp"} {
			if strings.Contains(raw, k) {
				mark = k
			}
		}
		if strings.Contains(raw, "<EVENT>") {
			mu.Lock()
			summaries[mark] = append(summaries[mark], r)
			mu.Unlock()
			return llmtest.Reply{ID: "resp-summary" + strings.TrimPrefix(mark, "#cond"), Text: summary}, nil
		}
		if _, ok := r.Body["tools"]; !ok || mark == "" { // a title, or another side call
			return llmtest.Reply{Text: "Condense"}, nil
		}
		switch toolResults(r) {
		case 0:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo out-alpha"}`}}}, nil
		case 1:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo out-beta"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)

	ref := sharedReference158(t)
	gh := startGohandsServer(t)

	for _, api := range []struct{ name, model string }{{"chat", "openai/gpt-4o"}, {"resp", "openai/gpt-5-mini"}} {
		t.Run(api.name, func(t *testing.T) {
			t.Parallel()
			type result struct {
				req  llmtest.Request
				cond map[string]any
				kind map[string]string // kinds of the conversation's events by id
			}
			run := func(srv *server, mark string) result {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
				defer cancel()
				c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
				llmCfg := func(usage string) map[string]any {
					return map[string]any{"model": api.model, "base_url": m.URL + "/v1",
						"api_key": "scripted", "usage_id": usage, "num_retries": 0}
				}
				body := startBody(m.URL, t.TempDir())
				a := body["agent"].(map[string]any)
				a["llm"] = llmCfg("agent")
				a["condenser"] = map[string]any{"kind": "LLMSummarizingCondenser", "llm": llmCfg("condenser"),
					"max_size": 240, "keep_first": 1}
				id, err := c.create(ctx, body)
				if err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				sub, err := c.subscribe(ctx, id)
				if err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				defer sub.close()
				if err := c.send(ctx, id, mark+": run two echoes, then finish"); err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				if _, err := sub.untilFinished(ctx); err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				if _, err := c.do(ctx, "POST", "/api/conversations/"+id+"/condense", nil, nil); err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				evs, err := allEvents(ctx, c, id)
				if err != nil {
					t.Fatalf("%s: %v", srv.name, err)
				}
				res := result{kind: map[string]string{}}
				for _, e := range evs {
					k, _ := e["kind"].(string)
					id, _ := e["id"].(string)
					res.kind[id] = k
					if k == "Condensation" {
						res.cond = e
					}
				}
				if res.cond == nil {
					t.Fatalf("%s stored no Condensation: %v", srv.name, res.kind)
				}
				mu.Lock()
				reqs := summaries[mark]
				mu.Unlock()
				if len(reqs) != 1 {
					t.Fatalf("%s sent %d summary requests, want 1", srv.name, len(reqs))
				}
				res.req = reqs[0]
				return res
			}
			var refRes, goRes result
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); refRes = run(ref, "#cond-ref-"+api.name) }()
			go func() { defer wg.Done(); goRes = run(gh, "#cond-go-"+api.name) }()
			wg.Wait()
			if t.Failed() {
				return
			}

			// The request: its layout and parameters.
			refLayout, goLayout := summaryLayout(t, refRes.req), summaryLayout(t, goRes.req)
			// Each conversation has its own id (prompt_cache_key); the
			// check is that both send one.
			for _, l := range []layout{refLayout, goLayout} {
				if l.params["prompt_cache_key"] != "" {
					l.params["prompt_cache_key"] = "(the conversation id)"
				}
			}
			// The reference's Responses options always add tool_choice
			// "auto"; with no tools it is the API's default, and gohands
			// sends tool_choice only with tools.
			if api.name == "resp" && refLayout.params["tool_choice"] == `"auto"` {
				delete(refLayout.params, "tool_choice")
			}
			if refLayout.String() != goLayout.String() {
				t.Errorf("summary request layout:\nreference %s\ngohands   %s", refLayout, goLayout)
			}
			for name, l := range map[string]layout{"reference": refLayout, "gohands": goLayout} {
				// The reference's layout is the test's expectation too:
				// a check that the comparison compares something.
				if l.roles != "system user" || l.events != 5 || !l.eventsInUser || l.eventsInSystem {
					t.Errorf("%s: summary request %s; want the roles system, user, 5 events, all in the user message", name, l)
				}
			}
			if api.name == "resp" && refLayout.params["store"] != "false" {
				t.Errorf("the reference's Responses summary call has store %q, want false", refLayout.params["store"])
			}

			// The stored Condensation.
			cmp := func(r result) string {
				var kinds []string
				for _, id := range r.cond["forgotten_event_ids"].([]any) {
					kinds = append(kinds, r.kind[id.(string)])
				}
				sort.Strings(kinds)
				keys := sortedKeys(r.cond)
				respID, _ := r.cond["llm_response_id"].(string)
				return fmt.Sprintf("fields %v, forgotten %v, summary %q, offset %v, llm_response_id %v",
					keys, kinds, r.cond["summary"], r.cond["summary_offset"], providerResponseID(respID))
			}
			refCond := strings.ReplaceAll(cmp(refRes), "-ref-", "-*-")
			goCond := strings.ReplaceAll(cmp(goRes), "-go-", "-*-")
			if refCond != goCond {
				t.Errorf("the Condensation:\nreference %s\ngohands   %s", refCond, goCond)
			}
			if !strings.Contains(refCond, "resp-summary-*-") || !strings.Contains(refCond, summary) {
				t.Errorf("the reference's Condensation lacks the summary response's id or text: %s", refCond)
			}
		})
	}
}

// providerResponseID undoes LiteLLM's wrapping of a Responses API id (the
// reference stores "resp_" and the base64 of "litellm:...;response_id:ID";
// gohands stores the provider's ID).
func providerResponseID(id string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(id, "resp_"))
	if err != nil || !strings.HasPrefix(string(b), "litellm:") {
		return id
	}
	_, after, ok := strings.Cut(string(b), ";response_id:")
	if !ok {
		return id
	}
	return after
}

// plainBody is a request's body as JSON with <, > and & as they are.
func plainBody(r llmtest.Request) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(r.Body)
	return b.String()
}

// toolResults counts the tool results in an agent step's request (Chat
// Completions or Responses).
func toolResults(r llmtest.Request) int {
	n := 0
	for _, key := range []string{"messages", "input"} {
		items, _ := r.Body[key].([]any)
		for _, it := range items {
			it, _ := it.(map[string]any)
			if it["role"] == "tool" || it["type"] == "function_call_output" {
				n++
			}
		}
	}
	return n
}

// layout is what TestCondense158 compares of a summary request.
type layout struct {
	roles          string            // the messages' roles, in order ("system" for Responses instructions)
	events         int               // <EVENT> blocks
	eventsInUser   bool              // every forgotten text is in the user message
	eventsInSystem bool              // some forgotten text is in the instructions
	params         map[string]string // the request's other fields, JSON
}

func (l layout) String() string {
	return fmt.Sprintf("roles %q, %d events, in the user message %v, in the instructions %v, params %v",
		l.roles, l.events, l.eventsInUser, l.eventsInSystem, l.params)
}

// summaryLayout reads a summary request (Chat Completions or Responses).
// The forgotten texts are the task's mark and the two commands' outputs.
func summaryLayout(t *testing.T, r llmtest.Request) layout {
	t.Helper()
	var roles []string
	var system, user strings.Builder
	add := func(role string, content any) {
		roles = append(roles, role)
		b := &user
		if role == "system" {
			b = &system
		}
		switch c := content.(type) {
		case string:
			b.WriteString(c)
		case []any:
			for _, p := range c {
				p, _ := p.(map[string]any)
				s, _ := p["text"].(string)
				b.WriteString(s)
			}
		}
	}
	l := layout{params: map[string]string{}}
	if ins, ok := r.Body["instructions"]; ok {
		add("system", ins)
	}
	for _, key := range []string{"messages", "input"} {
		items, _ := r.Body[key].([]any)
		for _, it := range items {
			it, _ := it.(map[string]any)
			role, _ := it["role"].(string)
			add(role, it["content"])
		}
	}
	for k, v := range r.Body {
		switch k {
		case "messages", "input", "instructions", "model":
			continue
		}
		b, _ := json.Marshal(v)
		l.params[k] = string(b)
	}
	if r.Stream {
		l.params["(streamed)"] = "true"
	}
	l.roles = strings.Join(roles, " ")
	l.events = strings.Count(user.String(), "<EVENT>")
	l.eventsInUser = true
	for _, s := range []string{"#cond-", "out-alpha", "out-beta"} {
		l.eventsInUser = l.eventsInUser && strings.Contains(user.String(), s)
		l.eventsInSystem = l.eventsInSystem || strings.Contains(system.String(), s)
	}
	return l
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// allEvents returns a conversation's events, as JSON objects, oldest first.
func allEvents(ctx context.Context, c *apiClient, id string) ([]map[string]any, error) {
	var out []map[string]any
	page := ""
	for {
		var res struct {
			Items []map[string]any `json:"items"`
			Next  *string          `json:"next_page_id"`
		}
		q := "limit=100"
		if page != "" {
			q += "&page_id=" + page
		}
		if _, err := c.do(ctx, "GET", "/api/conversations/"+id+"/events/search?"+q, nil, &res); err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if res.Next == nil || *res.Next == "" {
			return out, nil
		}
		page = *res.Next
	}
}
