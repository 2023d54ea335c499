package pyclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// agentToolsImage is the picture of the vision scenario (a 1x1 PNG).
const agentToolsImage = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// agentToolsScript is the workflow the agent of the workflow scenario
// runs: one sub-agent per item, then a reducer over their answers.
const agentToolsScript = `async def main(wf):
    found = await wf.map_agents(items=["alpha", "beta"], prompt="SUBTASK #wf check {item}", max_concurrency=2)
    return await wf.reduce_agent(items=found, prompt="SUBTASK #wf merge")
`

// agentToolsBadScript is the workflow of the badwf scenario: it fails.
const agentToolsBadScript = `async def main(wf):
    raise ValueError("boom")
`

// agentToolsScenario is one tool the agent is driven to call.
type agentToolsScenario struct {
	name   string   // the subtest, and the mark of its conversation ("#name")
	tool   string   // the tool's name, as offered to the model ("": the agent calls none)
	before bool     // run before the profiles are saved
	gist   []string // an error observation's text must name these (its words are each one's own)
	model  string   // the agent's model
	tools  []any    // the start request's tools
	call   string   // the arguments of the agent's call
	images bool     // the user's message has agentToolsImage
	want   string   // in the reference's stored events: the tool worked
}

var agentToolsScenarios = []agentToolsScenario{
	{name: "oracle", tool: "ask_oracle", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "ask_oracle"}},
		call:  `{"question":"Which sort suits 10 items? #oracle","context":"The list is nearly sorted."}`,
		want:  `"text":"Insertion sort: the list is short and nearly sorted.","type":"text"}],"is_error":false,"kind":"AskOracleObservation"`},
	{name: "vision", tool: "inspect_image_with_vision", model: "openai/gpt-3.5-turbo", // no vision: the tool comes by itself
		tools: []any{}, images: true,
		call: `{"image_index":0,"question":"What colour is the square? #vision"}`,
		want: `"answer":"Red."`},
	{name: "route", tool: "route_task_to_model", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "ClassifyAndSwitchLLMTool", "params": map[string]any{"active_meta_profile": "router"}}},
		call:  `{}`, want: `"is_error":false,"kind":"ClassifyAndSwitchLLMObservation","model":"strong"`},
	{name: "wf", tool: "workflow", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "workflow_tool_set"}},
		call:  mustJSON(map[string]any{"name": "pair", "script": agentToolsScript, "max_concurrency": 2}),
		want:  `"text":"merged: alpha and beta","type":"text"}],"is_error":false,"kind":"WorkflowObservation","name":"pair","status":"completed"`},

	// Error cases. A model that cannot see, given an image with no vision
	// profile saved (so no vision tool): the agent says so without a call
	// to the model and the run finishes.
	{name: "nosee", model: "openai/gpt-3.5-turbo", tools: []any{}, images: true, before: true,
		want: "MessageEvent (agent) assistant, naming the model: true"},
	{name: "nooracle", tool: "ask_oracle", model: "openai/gpt-4o", before: true,
		tools: []any{map[string]any{"name": "ask_oracle"}},
		call:  `{"question":"Which sort? #nooracle"}`, gist: []string{"oracle", "profile"},
		want: `"is_error":true,"kind":"AskOracleObservation"`},
	// The classifier answers no class, then a class that is not listed.
	{name: "noclass", tool: "route_task_to_model", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "ClassifyAndSwitchLLMTool", "params": map[string]any{"active_meta_profile": "router"}}},
		call:  `{}`, gist: []string{"none of them"},
		want: `"is_error":true,"kind":"ClassifyAndSwitchLLMObservation"`},
	{name: "wrongclass", tool: "route_task_to_model", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "ClassifyAndSwitchLLMTool", "params": map[string]any{"active_meta_profile": "router"}}},
		call:  `{}`, gist: []string{"class 7"},
		want: `"is_error":true,"kind":"ClassifyAndSwitchLLMObservation"`},
	{name: "badwf", tool: "workflow", model: "openai/gpt-4o",
		tools: []any{map[string]any{"name": "workflow_tool_set"}},
		call:  mustJSON(map[string]any{"name": "bad", "script": agentToolsBadScript}), gist: []string{"boom"},
		want: `"is_error":true,"kind":"WorkflowObservation","name":"bad","status":"error"`},
}

// TestAgentTools158 runs the same conversation on a reference 1.58.2
// server and on gohands serve for each of four tools that consult another
// model or sub-agents: ask_oracle (the saved "oracle" LLM profile),
// inspect_image_with_vision (offered by itself to a model that cannot see,
// with a vision profile saved), route_task_to_model (a meta-profile saved
// through /api/meta-profiles, its classifier and target LLM profiles
// through /api/profiles) and workflow (workflow_tool_set: a script mapping
// two sub-agents and reducing their answers). The scripted model calls the
// tool; the test compares the tool's definition as offered to the model
// (name, a description, the parameters' schema but its descriptions), the
// events stored after the user's message (the action and observation
// whole but ids, timestamps and the model's URL), what reaches the other
// model (its model, roles, content parts, the question, the image, the
// classes, the sub-agents' prompts and tools) and the final state
// (status, the agent's model, the usage ids of the stats). Left out as
// each one's own: the words of descriptions, prompts and of the routing
// observation's text (which must name the class, profile and model), the
// system message's parts; and one known difference, the workflow's
// sub-agent usage ids (see tools/workflow: 1.58.2 numbers each run's
// task_00000001 again and so loses costs).
//
// Error cases run the same way: before any profile is saved, an image for
// a model that cannot see (no vision tool: the agent says so, the model is
// not called, the run finishes) and ask_oracle with no oracle profile;
// then the classifier answering no class and a class not listed, and a
// workflow script that raises. An error observation's text is compared by
// what it names (see errorGist); after it the agent steps on.
func TestAgentTools158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	refModel := llmtest.NewResponder(t, agentToolsReply, nil)
	goModel := llmtest.NewResponder(t, agentToolsReply, nil)
	ref := startReferenceServer(t, py, "OH_PERSISTENCE_DIR="+t.TempDir())
	gh := startGohandsServer(t)
	compare := func(t *testing.T, sc agentToolsScenario) {
		t.Parallel()
		var refOut, goOut agentToolsRun
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); refOut = runAgentTools(t, ref, refModel, sc) }()
		go func() { defer wg.Done(); goOut = runAgentTools(t, gh, goModel, sc) }()
		wg.Wait()
		if t.Failed() {
			return
		}
		for _, part := range []struct{ what, ref, gh string }{
			{"the tool's definition", refOut.tool, goOut.tool},
			{"the events stored after the user's message", refOut.events, goOut.events},
			{"the requests to the other model", refOut.side, goOut.side},
			{"the final state", refOut.final, goOut.final},
		} {
			if part.ref != part.gh {
				t.Errorf("%s differs:\nreference:\n%s\ngohands:\n%s", part.what, part.ref, part.gh)
			}
		}
		// A check of the test: the reference did what the scenario is for.
		if !strings.Contains(refOut.events, sc.want) {
			t.Errorf("the reference's events lack %s:\n%s", sc.want, refOut.events)
		}
		fmt.Fprintf(testWriter{t}, "reference:\n%s\n%s\n%s\n%s", refOut.tool, refOut.events, refOut.side, refOut.final)
	}
	// The scenarios that need no saved profile (nor a vision one) first.
	t.Run("noprofiles", func(t *testing.T) {
		for _, sc := range agentToolsScenarios {
			if sc.before {
				t.Run(sc.name, func(t *testing.T) { compare(t, sc) })
			}
		}
	})
	for _, s := range []struct {
		srv   *server
		model *llmtest.Server
	}{{ref, refModel}, {gh, goModel}} {
		saveAgentToolsProfiles(t, s.srv, s.model.URL)
	}
	for _, sc := range agentToolsScenarios {
		if !sc.before {
			t.Run(sc.name, func(t *testing.T) { compare(t, sc) })
		}
	}
}

// saveAgentToolsProfiles saves on srv the LLM profiles (all on the
// scripted model at modelURL) and the meta-profile the scenarios use.
func saveAgentToolsProfiles(t *testing.T, srv *server, modelURL string) {
	t.Helper()
	c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
	for name, model := range map[string]string{
		"oracle": "openai/oracle-1", "eye": "openai/gpt-4o",
		"cls": "openai/cls-1", "strong": "openai/strong-1", "cheap": "openai/cheap-1",
	} {
		body := map[string]any{"include_secrets": true, "llm": map[string]any{
			"model": model, "base_url": modelURL + "/v1", "api_key": "sk-scripted", "num_retries": 0}}
		if _, err := c.do(t.Context(), "POST", "/api/profiles/"+name, body, nil); err != nil {
			t.Fatalf("%s: %v", srv.name, err)
		}
	}
	meta := map[string]any{"classifier_model": "cls", "classes": []any{
		map[string]any{"description": "routine edits", "model": "cheap"},
		map[string]any{"description": "hard algorithms", "model": "strong"}}}
	if _, err := c.do(t.Context(), "POST", "/api/meta-profiles/router", meta, nil); err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
}

// agentToolsReply is the scripted model of both servers. A request with
// tools is an agent's step: the first of a scenario's conversation calls
// its tool, the next finishes; a workflow's sub-agent finishes at once. A
// request without tools is the other model's call (oracle, vision,
// classifier), known by the scenario's mark.
func agentToolsReply(r llmtest.Request) (llmtest.Reply, error) {
	first := firstUserText(r)
	if _, ok := r.Body["tools"]; !ok {
		body := string(r.RawBody)
		switch {
		case strings.Contains(body, "#oracle"):
			return llmtest.Reply{Text: "Insertion sort: the list is short and nearly sorted."}, nil
		case strings.Contains(body, "#vision"):
			return llmtest.Reply{Text: "Red."}, nil
		case strings.Contains(body, "#route"):
			return llmtest.Reply{Text: "2"}, nil
		case strings.Contains(body, "#noclass"):
			return llmtest.Reply{Text: "none of them"}, nil
		case strings.Contains(body, "#wrongclass"):
			return llmtest.Reply{Text: "class 7"}, nil
		}
		return llmtest.Reply{Text: "Title"}, nil
	}
	finish := func(msg string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: mustJSON(map[string]string{"message": msg})}}}
	}
	if strings.Contains(first, "SUBTASK") {
		switch {
		case strings.Contains(first, "merge"):
			return finish("merged: alpha and beta"), nil
		case strings.Contains(first, "alpha"):
			return finish("found alpha"), nil
		}
		return finish("found beta"), nil
	}
	for _, sc := range agentToolsScenarios {
		if strings.HasPrefix(first, "#"+sc.name+" ") {
			if toolResults(r) == 0 && sc.tool != "" {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: sc.tool, Arguments: sc.call}}}, nil
			}
			return finish("done"), nil
		}
	}
	return llmtest.Reply{}, fmt.Errorf("no scenario for the request %.300s", r.RawBody)
}

// firstUserText is the text of a Chat Completions request's first user
// message.
func firstUserText(r llmtest.Request) string {
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		if m, _ := m.(map[string]any); m["role"] == "user" {
			return contentText(m["content"])
		}
	}
	return ""
}

// contentText is the text of a Chat Completions message's content.
func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if p, ok := p.(map[string]any); ok {
				s, _ := p["text"].(string)
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// agentToolsRun is what TestAgentTools158 compares of one server's run,
// as text.
type agentToolsRun struct {
	tool, events, side, final string
}

// runAgentTools runs sc's conversation on srv and returns what is
// compared.
func runAgentTools(t *testing.T, srv *server, model *llmtest.Server, sc agentToolsScenario) agentToolsRun {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
	defer cancel()
	fail := func(err error) agentToolsRun {
		t.Errorf("%s: %v", srv.name, err)
		return agentToolsRun{}
	}
	c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
	work := t.TempDir()
	body := map[string]any{
		"agent": map[string]any{
			"kind": "Agent",
			"llm": map[string]any{"model": sc.model, "base_url": model.URL + "/v1",
				"api_key": "scripted", "usage_id": "agent", "num_retries": 0},
			"tools":                 sc.tools,
			"include_default_tools": []any{"FinishTool"},
		},
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": work},
		"autotitle": false,
	}
	id, err := c.create(ctx, body)
	if err != nil {
		return fail(err)
	}
	sub, err := c.subscribe(ctx, id)
	if err != nil {
		return fail(err)
	}
	defer sub.close()
	content := []any{map[string]any{"type": "text", "text": "#" + sc.name + " please help"}}
	if sc.images {
		content = append(content, map[string]any{"type": "image", "image_urls": []any{agentToolsImage}})
	}
	msg := map[string]any{"role": "user", "run": true, "content": content}
	if _, err := c.do(ctx, "POST", "/api/conversations/"+id+"/events", msg, nil); err != nil {
		return fail(err)
	}
	_, runErr := sub.untilFinished(ctx)
	evs, err := allEvents(ctx, c, id)
	if err != nil {
		return fail(err)
	}
	if runErr != nil {
		return fail(fmt.Errorf("%w; events:\n%s", runErr, mustJSON(evs)))
	}
	norm := agentToolsNormaliser(model.URL, work)
	var out agentToolsRun

	// The tool as the agent's first step offers it, and the models of the
	// conversation's steps.
	var steps []llmtest.Request
	var side []string
	for _, r := range model.Requests() {
		first := firstUserText(r)
		if _, ok := r.Body["tools"]; ok && strings.HasPrefix(first, "#"+sc.name+" ") {
			steps = append(steps, r)
		} else if strings.Contains(string(r.RawBody), "#"+sc.name) {
			side = append(side, describeSideRequest(t, r))
		}
	}
	if len(steps) == 0 && sc.tool != "" {
		return fail(fmt.Errorf("the agent made no step"))
	}
	var models []string
	for _, r := range steps {
		m, _ := r.Body["model"].(string)
		models = append(models, m)
	}
	for _, tl := range anyList(firstBody(steps)["tools"]) {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		if fn["name"] != sc.tool {
			continue
		}
		desc, _ := fn["description"].(string)
		out.tool = fmt.Sprintf("name %v, described %v, parameters %s", fn["name"], desc != "", mustJSON(schemaShape(fn["parameters"])))
	}
	if out.tool == "" {
		out.tool = "(not offered)"
	}

	// The events after the user's message: actions and observations
	// whole, the others by kind and source.
	var stored []string
	after := false
	for _, e := range evs {
		kind, _ := e["kind"].(string)
		if kind == "MessageEvent" && e["source"] == "user" {
			after = true
			continue
		}
		if !after || kind == "ConversationStateUpdateEvent" {
			continue
		}
		switch kind {
		case "ActionEvent", "ObservationEvent", "AgentErrorEvent":
			stored = append(stored, mustJSON(errorGist(routeText(norm(e)), sc.gist)))
		case "MessageEvent":
			src, _ := e["source"].(string)
			m, _ := e["llm_message"].(map[string]any)
			stored = append(stored, fmt.Sprintf("%s (%s) %v, naming the model: %v", kind, src, m["role"], strings.Contains(contentText(m["content"]), sc.model)))
		default:
			src, _ := e["source"].(string)
			stored = append(stored, kind+" ("+src+")")
		}
	}
	// How the agent's first step shows the user's message (a model that
	// cannot see gets each image as a text naming its index). The system
	// message's parts are not compared: gohands always adds the dynamic
	// context (workspace, date), 1.58.2 only with an agent_context.
	first := "(none)"
	if len(steps) > 0 {
		first = systemParts.ReplaceAllString(describeRequest(t, steps[0]), "system")
	}
	if sc.images && len(steps) > 0 { // in words of each one's own, the image's index and the tool
		text := firstUserText(steps[0])
		first += fmt.Sprintf(", the image named as image_index=0 of %s: %v", sc.tool,
			strings.Contains(text, "image_index=0") && strings.Contains(text, sc.tool))
	}
	var tools []string
	if len(steps) > 0 {
		tools = toolNames(steps[0])
	}
	out.events = "the agent's first step: " + first + ", tools " + strings.Join(tools, " ") +
		"\n" + strings.Join(stored, "\n")
	slices.Sort(side)
	out.side = "agent steps on " + strings.Join(models, ", ") + "\n" + strings.Join(side, "\n")

	// The final state.
	var info map[string]any
	if _, err := c.do(ctx, "GET", "/api/conversations/"+id, nil, &info); err != nil {
		return fail(err)
	}
	agent, _ := info["agent"].(map[string]any)
	llm, _ := agent["llm"].(map[string]any)
	stats, _ := info["stats"].(map[string]any)
	usage, _ := stats["usage_to_metrics"].(map[string]any)
	ids := sortedKeys(usage)
	for i, id := range ids {
		// A known difference: gohands' workflow numbers its sub-agents
		// workflow_00000001, ... across the conversation where 1.58.2
		// starts each run's over at task_00000001 (tools/workflow).
		ids[i] = strings.Replace(id, "task:workflow_", "task:task_", 1)
	}
	out.final = fmt.Sprintf("status %v, agent model %v, usage ids %v", info["execution_status"], llm["model"], ids)
	return out
}

// describeSideRequest is what is compared of a request to another model
// than the agent's (oracle, vision, classifier) or of a sub-agent's step:
// its model, tools or not, its messages' roles and content parts, and the
// scenario's data it must carry (texts of other words are left out).
func describeSideRequest(t *testing.T, r llmtest.Request) string {
	t.Helper()
	var s strings.Builder
	s.WriteString(describeRequest(t, r))
	var raw strings.Builder
	for _, m := range anyList(r.Body["messages"]) {
		m, _ := m.(map[string]any)
		raw.WriteString(fmt.Sprint(m["role"]) + ": " + contentText(m["content"]) + "\n")
	}
	for _, want := range sideData.FindAllString(raw.String(), -1) {
		s.WriteString("; has " + strconv.Quote(want))
	}
	if _, tools := r.Body["tools"]; tools { // a sub-agent: its tools, its task as given
		s.WriteString(fmt.Sprintf("; tools %v; task %q", toolNames(r), firstUserText(r)))
	}
	return s.String()
}

// toolNames are the names of the tools a request offers, sorted.
func toolNames(r llmtest.Request) []string {
	var names []string
	for _, tl := range anyList(r.Body["tools"]) {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// describeRequest is a Chat Completions request's model, whether it
// offers tools, and its messages' roles and content parts' types (an
// image's: whether it is the scenario's).
func describeRequest(t *testing.T, r llmtest.Request) string {
	t.Helper()
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Errorf("a request to the model: %v", err)
	}
	_, tools := r.Body["tools"]
	var msgs []string
	for _, m := range body.Messages {
		var parts []string
		switch c := m.Content.(type) {
		case string:
			parts = append(parts, "text")
		case []any:
			for _, p := range c {
				p, _ := p.(map[string]any)
				typ, _ := p["type"].(string)
				if iu, ok := p["image_url"].(map[string]any); ok {
					typ += fmt.Sprintf("(%v)", iu["url"] == agentToolsImage)
				}
				parts = append(parts, typ)
			}
		}
		msgs = append(msgs, m.Role+"["+strings.Join(parts, " ")+"]")
	}
	return fmt.Sprintf("model %s, tools %v, messages %s", body.Model, tools, strings.Join(msgs, " "))
}

var systemParts = regexp.MustCompile(`system\[[a-z_ ]*\]`)

// sideData are the texts of the scenarios that must reach the other model.
var sideData = regexp.MustCompile(`Which sort suits 10 items\? #oracle|The list is nearly sorted\.|What colour is the square\? #vision|user: #route please help|routine edits|hard algorithms`)

// schemaShape is a JSON schema with each description replaced by whether
// there was one: the words are each implementation's own.
func schemaShape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k == "description" {
				s, _ := x.(string)
				out[k] = s != ""
				continue
			}
			out[k] = schemaShape(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = schemaShape(x)
		}
		return out
	}
	return v
}

// agentToolsNormaliser returns a function replacing in a stored event what
// differs by nature: ids, timestamps, the scripted model's URL, the
// workspace.
func agentToolsNormaliser(modelURL, work string) func(map[string]any) any {
	var walk func(k string, v any) any
	walk = func(k string, v any) any {
		switch k {
		case "id", "timestamp", "tool_call_id", "action_id", "llm_response_id", "parent_id":
			if v != nil {
				return "(" + k + ")"
			}
		}
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				out[k] = walk(k, x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = walk(k, x)
			}
			return out
		case string:
			v = strings.ReplaceAll(v, modelURL, "(model)")
			return strings.ReplaceAll(v, work, "(workspace)")
		}
		return v
	}
	return func(e map[string]any) any { return walk("", e) }
}

// routeText replaces the text of a ClassifyAndSwitchLLMObservation, each
// implementation's own words, by what it must name: the class, the
// profile and the model now active.
func routeText(e any) any {
	obs, _ := e.(map[string]any)["observation"].(map[string]any)
	if obs["kind"] != "ClassifyAndSwitchLLMObservation" || obs["is_error"] == true { // errors: see errorGist
		return e
	}
	for _, c := range anyList(obs["content"]) {
		c, _ := c.(map[string]any)
		text, _ := c["text"].(string)
		var named []string
		for _, k := range []string{"chosen_class", "model", "active_model"} {
			if s, _ := obs[k].(string); s != "" && strings.Contains(text, s) {
				named = append(named, k)
			}
		}
		c["text"] = "(names " + strings.Join(named, ", ") + ")"
	}
	return e
}

// firstBody is the body of the first of steps, if any.
func firstBody(steps []llmtest.Request) map[string]any {
	if len(steps) == 0 {
		return nil
	}
	return steps[0].Body
}

// errorGist replaces the text of an error observation, each
// implementation's own words, by which of gist it names.
func errorGist(e any, gist []string) any {
	obs, _ := e.(map[string]any)["observation"].(map[string]any)
	if obs["is_error"] != true || gist == nil {
		return e
	}
	for _, c := range anyList(obs["content"]) {
		c, _ := c.(map[string]any)
		text, _ := c["text"].(string)
		var named []string
		for _, g := range gist {
			if strings.Contains(strings.ToLower(text), g) {
				named = append(named, strconv.Quote(g))
			}
		}
		c["text"] = "(an error naming " + strings.Join(named, ", ") + ")"
	}
	return e
}

// mustJSON is v as JSON (sorted keys).
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
