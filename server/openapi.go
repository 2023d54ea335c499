package server

import (
	"github.com/gohands/gohands/server/internal/apidocs"

	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi3"
)

// openAPI builds the OpenAPI document from the route table: parameters
// from the `query` and `path` tags of the types the handlers decode,
// bodies and responses from their request and response types.
func (s *Server) openAPI() ([]byte, error) {
	r := openapi3.NewReflector()
	r.Spec.Info.WithTitle("gohands agent server").WithVersion(s.opts.Version).
		WithDescription("The OpenHands agent-server API, served by gohands.")
	r.Spec.SetAPIKeySecurity("APIKeyHeader", "X-Session-API-Key", openapi.InHeader, "Session API key")
	// The bodies declared in package protocol keep the names they had
	// when the server declared them (ServerForkRequest, ...).
	r.DefaultOptions = append(r.DefaultOptions, jsonschema.InterceptDefName(func(_ reflect.Type, name string) string {
		if rest, ok := strings.CutPrefix(name, "Protocol"); ok {
			return "Server" + rest
		}
		return name
	}), jsonschema.InterceptNullability(nullableRef))
	for _, rt := range s.routes {
		op, err := r.NewOperationContext(rt.method, rt.path)
		if err != nil {
			return nil, err
		}
		op.SetSummary(rt.summary)
		op.SetTags(rt.tag)
		op.SetID(operationID(rt))
		if !rt.public {
			op.AddSecurity("APIKeyHeader")
		}
		if rt.query != nil {
			op.AddReqStructure(rt.query)
		}
		if p := pathParams(rt.path, declaredPath(rt.query, rt.body)); p != nil {
			op.AddReqStructure(p)
		}
		if rt.body != nil {
			if _, form := rt.body.(uploadForm); form {
				op.AddReqStructure(rt.body, openapi.WithContentType("multipart/form-data"))
			} else {
				op.AddReqStructure(rt.body, openapi.WithContentType("application/json"))
			}
		}
		// ok documents a success status with the route's response.
		ok := func(status int) {
			switch resp := rt.resp.(type) {
			case []byte:
				if status == http.StatusNoContent {
					op.AddRespStructure(nil, openapi.WithHTTPStatus(status))
				} else {
					op.AddRespStructure(nil, openapi.WithHTTPStatus(status), openapi.WithContentType("application/octet-stream"))
				}
			case mediaTypes:
				for _, ct := range resp {
					op.AddRespStructure(nil, openapi.WithHTTPStatus(status), openapi.WithContentType(ct))
				}
			case plainText:
				op.AddRespStructure(nil, openapi.WithHTTPStatus(status), openapi.WithContentType("text/plain"))
			default:
				op.AddRespStructure(rt.resp, openapi.WithHTTPStatus(status))
			}
		}
		for _, code := range rt.statuses() {
			switch {
			case code < 300:
				ok(code) // the success status, and 200 beside 201, 206 beside 200
			case code == 422:
				op.AddRespStructure(validationErrors{}, openapi.WithHTTPStatus(422))
			default:
				op.AddRespStructure(errorDetail{}, openapi.WithHTTPStatus(code))
			}
		}
		status := rt.okStatus()
		if err := r.AddOperation(op); err != nil {
			return nil, err
		}
		if rt.nullableItems {
			nullItems(r.Spec, rt, status)
		}
		if rt.body != nil && !optionalBody(rt.body) {
			op := r.Spec.Paths.MapOfPathItemValues[rt.path].MapOfOperationValues[strings.ToLower(rt.method)]
			if rb := op.RequestBody; rb != nil && rb.RequestBody != nil {
				required := true
				rb.RequestBody.Required = &required
			}
		}
	}
	describeStart(r.Spec)
	openDetail(r.Spec)
	return r.Spec.MarshalJSON()
}

// describeStart documents the start request's agent and agent_settings,
// which the server keeps as raw JSON until it validates them (their
// reflected schema says nothing), and gives the route an example body.
// The agent is one of the reference's kinds, Agent or ACPAgent, with the
// fields it requires (llm; acp_command); both stay open to the rest of
// their fields, which the server checks itself.
func describeStart(spec *openapi3.Spec) {
	sc, ok := spec.Components.Schemas.MapOfSchemaOrRefValues["ServerStartRequest"]
	if !ok || sc.Schema == nil {
		return
	}
	object, str, arr := openapi3.SchemaTypeObject, openapi3.SchemaTypeString, openapi3.SchemaTypeArray
	obj := func(desc string, props map[string]openapi3.SchemaOrRef, required ...string) *openapi3.Schema {
		return &openapi3.Schema{Type: &object, Description: &desc, Properties: props, Required: required}
	}
	text := func(desc string, values ...any) openapi3.SchemaOrRef {
		return openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &str, Description: &desc, Enum: values}}
	}
	list := func(desc string, items openapi3.SchemaOrRef) openapi3.SchemaOrRef {
		return openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &arr, Description: &desc, Items: &items}}
	}
	plain := openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &str}}
	ref := func(name string) openapi3.SchemaOrRef {
		return openapi3.SchemaOrRef{SchemaReference: &openapi3.SchemaReference{Ref: "#/components/schemas/" + name}}
	}
	add := func(name string, s *openapi3.Schema) {
		spec.Components.Schemas.MapOfSchemaOrRefValues[name] = openapi3.SchemaOrRef{Schema: s}
	}
	add("LLM", obj("The reference's LLM object: model, api_key, base_url and its other settings (retries, timeouts, sampling, ...).",
		map[string]openapi3.SchemaOrRef{
			"model":    text("Provider-prefixed model name, as LiteLLM writes it (anthropic/claude-sonnet-4-5, openai/gpt-5, gemini/..., bedrock/..., vertex_ai/...). gohands requires it where the reference defaults it."),
			"api_key":  text("The provider's key; answered redacted."),
			"base_url": text("The provider's endpoint, when not its default."),
			"usage_id": text("Names the LLM in the conversation's metrics."),
		}, "model"))
	add("ToolSpec", obj("A tool of the agent.", map[string]openapi3.SchemaOrRef{
		"name":   text("A registered tool or tool set (terminal, file_editor, task_tracker, browser_tool_set, ...)."),
		"params": {Schema: obj("The tool's parameters.", nil)},
	}, "name"))
	tools := list("The agent's tools.", ref("ToolSpec"))
	add("Agent", obj("An LLM agent (kind Agent, assumed when kind is absent): its model, tools and the rest of the reference's Agent fields (agent_context, condenser, critic, mcp_config, system_prompt, ...).",
		map[string]openapi3.SchemaOrRef{
			"kind":  text("The agent's kind.", "Agent"),
			"llm":   ref("LLM"),
			"tools": tools,
			"include_default_tools": list("The built-in tools to include (FinishTool and ThinkTool when absent).",
				openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &str, Enum: []any{"FinishTool", "ThinkTool", "InvokeSkillTool", "SwitchLLMTool"}}}),
			"condenser": {Schema: obj("A kind-tagged condenser (LLMSummarizingCondenser, PipelineCondenser, NoOpCondenser, ...).", nil, "kind")},
		}, "llm"))
	add("ACPAgent", obj("An agent that drives an ACP server (kind ACPAgent): the server runs its own model and tools.",
		map[string]openapi3.SchemaOrRef{
			"kind":             text("The agent's kind.", "ACPAgent"),
			"acp_command":      list("The program that serves ACP over stdio, and its first arguments.", plain),
			"acp_args":         list("Arguments appended to acp_command.", plain),
			"acp_model":        text("The model the ACP server should use; absent: its default."),
			"acp_session_mode": text("The ACP session mode set once the session exists."),
		}, "kind", "acp_command"))
	agent := &openapi3.Schema{
		OneOf:         []openapi3.SchemaOrRef{ref("Agent"), ref("ACPAgent")},
		Discriminator: &openapi3.Discriminator{PropertyName: "kind", Mapping: map[string]string{"Agent": "#/components/schemas/Agent", "ACPAgent": "#/components/schemas/ACPAgent"}},
	}
	agent.WithDescription("The agent that runs the conversation. One of agent and agent_settings is required; agent wins when both are given.")
	settings := obj("Agent settings (agent_kind openhands): the server builds the agent from them as the reference does, with its default tools unless tools or preset say otherwise. Used when agent is absent.",
		map[string]openapi3.SchemaOrRef{
			"agent_kind": text("Only the standard agent is built from settings; send an ACPAgent as agent.", "openhands"),
			"llm":        ref("LLM"),
			"tools":      tools,
			"preset":     text("gohands: a named preset of tools, condenser and prompt (default, gpt5, gemini, planning)."),
		})
	one := int64(1)
	clientTool := obj("A tool the client executes (the reference's ClientToolSpec): the agent's calls of it reach the client as events on its socket.",
		map[string]openapi3.SchemaOrRef{
			"name":        {Schema: &openapi3.Schema{Type: &str, MinLength: &one, Description: new("The name the agent calls the tool by; not a registered tool's.")}},
			"description": {Schema: &openapi3.Schema{Type: &str, MinLength: &one, Description: new("What the tool does, for the model.")}},
			"parameters":  {Schema: obj("The JSON schema (type object) of the tool's input; absent: no input.", nil)},
			"annotations": {Schema: obj("MCP-style hints (readOnlyHint, destructiveHint, ...).", nil)},
		}, "name", "description")
	clientTool.AdditionalProperties = &openapi3.SchemaAdditionalProperties{Bool: new(false)}
	add("ClientToolSpec", clientTool)
	sc.Schema.Properties["client_tools"] = list("Tools the client executes.", ref("ClientToolSpec"))
	nullable := true
	settings.Nullable = &nullable
	sc.Schema.Properties["agent"] = openapi3.SchemaOrRef{Schema: agent}
	sc.Schema.Properties["agent_settings"] = openapi3.SchemaOrRef{Schema: settings}
	if op, ok := spec.Paths.MapOfPathItemValues["/api/conversations"].MapOfOperationValues["post"]; ok && op.RequestBody != nil && op.RequestBody.RequestBody != nil {
		if mt, ok := op.RequestBody.RequestBody.Content["application/json"]; ok {
			var example any = startExample
			mt.Example = &example
			op.RequestBody.RequestBody.Content["application/json"] = mt
		}
	}
}

// nullableRef lets a pointer to a struct without omitempty be null, as
// encoding/json writes a nil one (runtime_info's runtime_error): the
// reflector leaves such a property a bare $ref to a shared definition,
// which OpenAPI 3.0 cannot mark nullable beside it, hence the allOf.
func nullableRef(p jsonschema.InterceptNullabilityParams) {
	t := p.Type
	if p.OmitEmpty || p.Schema.Ref == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	ref := *p.Schema
	*p.Schema = jsonschema.Schema{AllOf: []jsonschema.SchemaOrBool{ref.ToSchemaOrBool()}}
	p.Schema.AddType(jsonschema.Null)
}

// startExample is the start route's example request: an LLM agent with
// the usual tools, a local workspace and a first message that runs.
var startExample = map[string]any{
	"agent": map[string]any{
		"kind":  "Agent",
		"llm":   map[string]any{"model": "anthropic/claude-sonnet-4-5", "api_key": "your-api-key"},
		"tools": []any{map[string]any{"name": "terminal"}, map[string]any{"name": "file_editor"}, map[string]any{"name": "task_tracker"}},
	},
	"workspace":       map[string]any{"kind": "LocalWorkspace", "working_dir": "workspace/project"},
	"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Make the failing test in tests/test_calc.py pass."}}, "run": true},
}

// nullItems marks the items of a route's list response nullable (OpenAPI
// 3.0 ignores siblings of $ref, hence the allOf).
func nullItems(spec *openapi3.Spec, rt *route, status int) {
	pi := spec.Paths.MapOfPathItemValues[rt.path]
	op := pi.MapOfOperationValues[strings.ToLower(rt.method)]
	resp := op.Responses.MapOfResponseOrRefValues[strconv.Itoa(status)]
	if resp.Response == nil {
		return
	}
	for ct, mt := range resp.Response.Content {
		if mt.Schema == nil || mt.Schema.Schema == nil || mt.Schema.Schema.Items == nil {
			continue
		}
		item := *mt.Schema.Schema.Items
		null := true
		mt.Schema.Schema.Items = &openapi3.SchemaOrRef{Schema: &openapi3.Schema{Nullable: &null, AllOf: []openapi3.SchemaOrRef{item}}}
		resp.Response.Content[ct] = mt
	}
}

// optionalBody reports whether a route's body may be left out (its
// handler reads an empty body as the defaults).
func optionalBody(body any) bool {
	switch body.(type) {
	case forkRequest, navigateRequest, generateTitleRequest:
		return true
	}
	return false
}

func operationID(rt *route) string {
	b := []byte(rt.method)
	for _, c := range rt.path {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b = append(b, byte(c))
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}

// pathParams returns the struct documenting a route's path parameters,
// nil for none.
func pathParams(path string, declared map[string]bool) any {
	switch {
	case strings.Contains(path, "{runtime_conversation_id}"):
		return dynamicPathParams(path, declared)
	case strings.Contains(path, "{conversation_id}") && strings.Contains(path, "{event_id}"):
		return eventPath{}
	case strings.Contains(path, "{conversation_id}"):
		return idPath{}
	case strings.Contains(path, "{event_id}"):
		return bashEventPath{}
	case strings.Contains(path, "{"):
		return dynamicPathParams(path, declared)
	}
	return nil
}

// declaredPath returns the path parameters the structs vs (a route's
// query and body) document themselves (fields tagged `path`).
func declaredPath(vs ...any) map[string]bool {
	names := map[string]bool{}
	for _, v := range vs {
		t := reflect.TypeOf(v)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			continue
		}
		for f := range t.Fields() {
			if name := f.Tag.Get("path"); name != "" {
				names[name] = true
			}
		}
	}
	return names
}

// dynamicPathParams documents the parameters of any other path that are
// not declared elsewhere: a string each, a UUID for the ids that are
// conversation or command ids. Nil when none is left.
func dynamicPathParams(path string, declared map[string]bool) any {
	var fields []reflect.StructField
	for rest := path; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		name := rest[i+1 : i+j]
		rest = rest[i+j:]
		if declared[name] {
			continue
		}
		tag := `path:"` + name + `"`
		if strings.HasSuffix(name, "conversation_id") || name == "command_id" {
			tag += ` format:"uuid"`
		}
		fields = append(fields, reflect.StructField{Name: "P" + strconv.Itoa(len(fields)), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(tag)})
	}
	if len(fields) == 0 {
		return nil
	}
	return reflect.New(reflect.StructOf(fields)).Elem().Interface()
}

var (
	openAPIOnce sync.Once
	openAPIDoc  []byte
	openAPIErr  error
)

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	openAPIOnce.Do(func() { openAPIDoc, openAPIErr = s.openAPI() })
	if openAPIErr != nil {
		writeInternal(w, openAPIErr)
		return
	}
	writeJSON(w, http.StatusOK, openAPIDoc)
}

// handleDocs and handleRedoc show /openapi.json with Swagger UI and Redoc,
// whose scripts the binary holds (internal/apidocs): they work offline.
func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	apidocs.Swagger(w, "gohands agent server — API", "/openapi.json")
}

func (s *Server) handleRedoc(w http.ResponseWriter, r *http.Request) {
	apidocs.Redoc(w, "gohands agent server — API", "/openapi.json")
}

// openDetail lets an error's detail take the other shapes the server
// answers, as the reference's routes do though its own document promises
// one: a 422's detail may be a string ({"detail": "Invalid secret name
// ..."}) besides the list, and any error's may be a {code, message}
// object (the plugin fetch's 422, 502 and 504).
func openDetail(spec *openapi3.Spec) {
	str, obj := openapi3.SchemaTypeString, openapi3.SchemaTypeObject
	coded := openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &obj, Required: []string{"code", "message"}, Properties: map[string]openapi3.SchemaOrRef{
		"code": {Schema: &openapi3.Schema{Type: &str}}, "message": {Schema: &openapi3.Schema{Type: &str}},
	}}}
	for name, sc := range spec.Components.Schemas.MapOfSchemaOrRefValues {
		if (name != "ServerValidationErrors" && !strings.HasSuffix(name, "ErrorDetail")) || sc.Schema == nil {
			continue
		}
		d, ok := sc.Schema.Properties["detail"]
		if !ok || d.Schema == nil {
			continue
		}
		was := *d.Schema
		alts := []openapi3.SchemaOrRef{{Schema: &was}, coded}
		if name == "ServerValidationErrors" {
			alts = append(alts, openapi3.SchemaOrRef{Schema: &openapi3.Schema{Type: &str}})
		}
		sc.Schema.Properties["detail"] = openapi3.SchemaOrRef{Schema: &openapi3.Schema{AnyOf: alts}}
	}
}
