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
	}))
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
		status := rt.status
		if status == 0 {
			status = http.StatusOK
		}
		if _, raw := rt.resp.([]byte); raw && status == http.StatusNoContent {
			op.AddRespStructure(nil, openapi.WithHTTPStatus(status))
		} else if raw {
			op.AddRespStructure(nil, openapi.WithHTTPStatus(status), openapi.WithContentType("application/octet-stream"))
		} else {
			op.AddRespStructure(rt.resp, openapi.WithHTTPStatus(status))
		}
		for _, code := range rt.errors {
			switch code {
			case 200:
				op.AddRespStructure(rt.resp, openapi.WithHTTPStatus(200))
			case 422:
				op.AddRespStructure(validationErrors{}, openapi.WithHTTPStatus(422))
			default:
				op.AddRespStructure(errorDetail{}, openapi.WithHTTPStatus(code))
			}
		}
		if !rt.public {
			op.AddRespStructure(errorDetail{}, openapi.WithHTTPStatus(http.StatusUnauthorized))
		}
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
	stringDetail(r.Spec)
	return r.Spec.MarshalJSON()
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

// stringDetail lets a 422's detail be a string too: some routes answer
// {"detail": "Invalid secret name ..."} as the reference's do, though the
// reference's own document promises a list there.
func stringDetail(spec *openapi3.Spec) {
	sc, ok := spec.Components.Schemas.MapOfSchemaOrRefValues["ServerValidationErrors"]
	if !ok || sc.Schema == nil {
		return
	}
	d, ok := sc.Schema.Properties["detail"]
	if !ok || d.Schema == nil {
		return
	}
	str := openapi3.SchemaTypeString
	list := *d.Schema
	sc.Schema.Properties["detail"] = openapi3.SchemaOrRef{Schema: &openapi3.Schema{AnyOf: []openapi3.SchemaOrRef{{Schema: &list}, {Schema: &openapi3.Schema{Type: &str}}}}}
}
