package server

import (
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gohands/gohands/server/internal/apidocs"
	"github.com/gohands/gohands/tool"
)

// route is one REST route: its handler and what /openapi.json says of it.
type route struct {
	method, path string
	summary      string
	tag          string
	public       bool // no session key needed
	query        any  // struct with `query` tags
	body         any
	resp         any
	status       int   // success status (200 by default)
	errors       []int // documented error statuses
	// nullableItems says the response list may hold nulls.
	nullableItems bool
	h             http.HandlerFunc
}

// plainText is the resp of a route answering text/plain (a secret's
// value), as the document says.
type plainText string

// mediaTypes as a route's resp documents a body sent as one of these
// types, the route's choice (the archive: a patch or a tarball).
type mediaTypes []string

// idPath documents the {conversation_id} path parameter.
type idPath struct {
	ConversationID string `path:"conversation_id" format:"uuid"`
}

type eventPath struct {
	ConversationID string `path:"conversation_id" format:"uuid"`
	EventID        string `path:"event_id"`
}

type bashEventPath struct {
	EventID string `path:"event_id"`
}

// routeTable lists every REST route.
func (s *Server) routeTable() []*route {
	const (
		conv   = "/api/conversations/{conversation_id}"
		tConv  = "Conversations"
		tEv    = "Events"
		tBash  = "Bash"
		tFiles = "Files"
		tGit   = "Git"
		tSrv   = "Server Details"
	)
	nf := []int{404, 422}
	return append([]*route{
		{method: "GET", path: "/alive", summary: "Liveness", tag: tSrv, public: true, resp: statusResponse{}, h: s.handleAlive},
		{method: "GET", path: "/health", summary: "Health", tag: tSrv, public: true, resp: statusResponse{}, h: s.handleAlive},
		{method: "GET", path: "/ready", summary: "Readiness", tag: tSrv, public: true, resp: statusResponse{}, errors: []int{503}, h: s.handleReady},
		{method: "GET", path: "/server_info", summary: "Server information", tag: tSrv, public: true, resp: serverInfo{}, h: s.handleServerInfo},

		{method: "POST", path: "/api/conversations", summary: "Start a conversation (201), or get the one with conversation_id (200)", tag: tConv, query: &includeSkillsQuery{}, body: startRequest{}, resp: conversationInfo{}, status: 201, errors: []int{200, 400, 404, 422, 429}, h: handle(s, nil, s.handleStart)},
		{method: "GET", path: "/api/conversations/search", summary: "Search conversations", tag: tConv, query: &searchQuery{}, resp: conversationPage{}, errors: []int{422}, h: handle(s, nil, s.handleSearch)},
		{method: "GET", path: "/api/conversations/count", summary: "Count conversations", tag: tConv, query: &countQuery{}, resp: 0, errors: []int{422}, h: handle(s, nil, s.handleCount)},
		{method: "GET", path: "/api/conversations", summary: "Get conversations by id (null for unknown ids)", tag: tConv, query: &batchQuery{}, resp: []*conversationInfo{}, errors: []int{422}, h: handle(s, nil, s.handleBatchGet), nullableItems: true},
		{method: "GET", path: conv, summary: "Get a conversation", tag: tConv, query: &includeSkillsQuery{}, resp: conversationInfo{}, errors: nf, h: handle(s, nil, s.handleGet)},
		{method: "PATCH", path: conv, summary: "Set a conversation's title or tags (success false for an unknown id)", tag: tConv, body: updateRequest{}, resp: successResponse{}, errors: []int{422}, h: handle(s, &handleOpts{missing: http.StatusOK}, s.handleUpdate)},
		{method: "DELETE", path: conv, summary: "Delete a conversation (400 for an unknown id)", tag: tConv, resp: successResponse{}, errors: []int{400, 422}, h: handle(s, &handleOpts{missing: http.StatusBadRequest}, s.handleDelete)},
		{method: "POST", path: conv + "/run", summary: "Run the agent", tag: tConv, resp: successResponse{}, errors: []int{404, 409, 422, 429}, h: handle(s, nil, s.handleRun)},
		{method: "POST", path: conv + "/pause", summary: "Pause after the step in progress (400 for an unknown id)", tag: tConv, resp: successResponse{}, errors: []int{400, 422}, h: handle(s, &handleOpts{missing: http.StatusBadRequest}, s.handlePause)},
		{method: "POST", path: conv + "/interrupt", summary: "Interrupt: cancel the step in progress and pause (400 for an unknown id)", tag: tConv, resp: successResponse{}, errors: []int{400, 422}, h: handle(s, &handleOpts{missing: http.StatusBadRequest}, s.handleInterrupt)},
		{method: "POST", path: conv + "/secrets", summary: "Add or replace secrets", tag: tConv, body: secretsRequest{}, resp: successResponse{}, errors: nf, h: handle(s, nil, s.handleSecrets)},
		{method: "POST", path: conv + "/confirmation_policy", summary: "Set the confirmation policy", tag: tConv, body: policyRequest{}, resp: successResponse{}, errors: nf, h: handle(s, nil, s.handlePolicy)},
		{method: "POST", path: conv + "/security_analyzer", summary: "Set or clear the security analyzer", tag: tConv, body: analyzerRequest{}, resp: successResponse{}, errors: nf, h: handle(s, nil, s.handleAnalyzer)},
		{method: "POST", path: conv + "/ask_agent", summary: "Ask the agent a side question (nothing is recorded)", tag: tConv, body: askRequest{}, resp: askResponse{}, errors: []int{404, 422, 500, 502}, h: handle(s, nil, s.handleAsk)},
		{method: "POST", path: conv + "/condense", summary: "Condense the history now (409 when the agent has no condenser acting on requests)", tag: tConv, resp: successResponse{}, errors: []int{404, 409, 422}, h: handle(s, nil, s.handleCondense)},
		{method: "GET", path: conv + "/agent_final_response", summary: "The agent's final response", tag: tConv, resp: askResponse{}, errors: nf, h: handle(s, nil, s.handleFinalResponse)},

		{method: "GET", path: conv + "/events/search", summary: "Search events", tag: tEv, query: &eventSearchQuery{}, resp: eventPage{}, errors: nf, h: handle(s, nil, s.handleEventSearch)},
		{method: "GET", path: conv + "/events/count", summary: "Count events", tag: tEv, query: &eventCountQuery{}, resp: 0, errors: nf, h: handle(s, nil, s.handleEventCount)},
		{method: "GET", path: conv + "/events/{event_id}", summary: "Get an event", tag: tEv, resp: map[string]any{}, errors: nf, h: handle(s, nil, s.handleEventGet)},
		{method: "GET", path: conv + "/events", summary: "Get events by id (a JSON list of ids as the body)", tag: tEv, body: batchEventsRequest{}, resp: []map[string]any{}, errors: nf, h: handle(s, nil, s.handleEventBatch)},
		{method: "POST", path: conv + "/events", summary: "Send a user message, and run the agent if run is set", tag: tEv, body: sendMessageRequest{}, resp: successResponse{}, errors: []int{404, 409, 422, 429}, h: handle(s, nil, s.handleSendMessage)},
		{method: "POST", path: conv + "/events/respond_to_confirmation", summary: "Accept (run) or reject the actions waiting for confirmation", tag: tEv, body: confirmationRequest{}, resp: successResponse{}, errors: []int{404, 409, 422, 429}, h: handle(s, nil, s.handleConfirmation)},

		{method: "POST", path: "/api/bash/start_bash_command", summary: "Start a shell command", tag: tBash, body: bashRequest{}, resp: bashEvent{}, errors: []int{422}, h: s.handleBashStart},
		{method: "POST", path: "/api/bash/execute_bash_command", summary: "Run a shell command and wait for its last output", tag: tBash, body: bashRequest{}, resp: bashEvent{}, errors: []int{422}, h: s.handleBashExecute},
		{method: "GET", path: "/api/bash/bash_events/search", summary: "Search bash events", tag: tBash, query: &bashSearchQuery{}, resp: bashPage{}, errors: []int{422}, h: s.handleBashSearch},
		{method: "GET", path: "/api/bash/bash_events/{event_id}", summary: "Get a bash event", tag: tBash, resp: bashEvent{}, errors: []int{404}, h: s.handleBashGet},
		{method: "DELETE", path: "/api/bash/bash_events", summary: "Clear the bash events", tag: tBash, resp: clearedResponse{}, h: s.handleBashClear},

		{method: "POST", path: "/api/file/upload", summary: "Upload a file (multipart field file)", tag: tFiles, query: &pathQuery{}, body: uploadForm{}, resp: uploadResult{}, errors: []int{400, 413, 422}, h: s.handleUpload},
		{method: "GET", path: "/api/file/download", summary: "Download a file", tag: tFiles, query: &pathQuery{}, resp: []byte{}, errors: []int{400, 404, 422}, h: s.handleDownload},

		{method: "GET", path: "/api/git/changes", summary: "Changed files of a repository", tag: tGit, query: &gitQuery{}, resp: []gitChange{}, errors: []int{400, 422}, h: s.handleGitChanges},
		{method: "GET", path: "/api/git/diff", summary: "A file before and after its changes", tag: tGit, query: &diffQuery{}, resp: gitDiff{}, errors: []int{400, 422}, h: s.handleGitDiff},

		{method: "GET", path: "/api/tools/", summary: "Registered tool names", tag: "Tools", resp: []string{}, h: s.handleTools},
	}, append(append(s.controlRoutes(), s.goalRoutes()...), append(append(s.settingsRoutes(), s.gatewayRoutes()...), s.workspaceRoutes()...)...)...)
}

// allRoutes is the route table with the runtime-scoped twins of its
// bash, file and git routes.
func (s *Server) allRoutes() []*route {
	rs := append(s.routeTable(), s.bashMoreRoutes()...)
	rs = append(rs, s.fileBrowserRoutes()...)
	rs = append(rs, s.trajectoryRoute())
	rs = append(rs, s.gitMoreRoutes()...)
	rs = append(rs, s.llmCatalogRoutes()...)
	rs = append(rs, s.hooksRoutes()...)
	rs = append(rs, s.profileRoutes()...)
	rs = append(rs, s.subAgentRoutes()...)
	rs = append(rs, s.skillRoutes()...)
	rs = append(rs, s.pluginRoutes()...)
	rs = append(rs, s.installedSkillRoutes()...)
	rs = append(rs, s.metaProfileRoutes()...)
	rs = append(rs, s.agentProfileRoutes()...)
	rs = append(rs, s.publicCatalogRoutes()...)
	rs = append(rs, s.subscriptionRoutes()...)
	rs = append(rs, s.acpModelsRoute(), s.acpSwitchRoute())
	rs = append(rs, s.mcpRoutes()...)
	rs = append(rs, s.childRoutes()...)
	rs = append(rs, s.vscodeRoutes()...)
	rs = append(rs, s.canvasRoutes()...)
	rs = append(rs, s.connectionRoutes()...)
	rs = append(rs, s.convRuntimeRoutes()...)
	rs = append(rs, s.archiveRoute())
	return append(rs, s.runtimeRoutes(rs)...)
}

// undocumented, when set (by this package's tests), hears of every
// answer a route gives with a status its operation in /openapi.json does
// not list, with the answer's first bytes. It is the fuzz's status-code
// check (tests/pyclient TestSchemathesis) made on every request the
// package's own tests send, error paths the fuzz reaches only by chance
// included.
var undocumented func(rt *route, status int, body []byte)

// checkDocumented reports to undocumented what h answers outside rt's
// documented statuses. A 503 is left out: it is the server's state
// (draining, a store that cannot be read, a node that does not answer),
// which any route may meet, not the operation's answer.
func checkDocumented(rt *route, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &headWriter{statusWriter: statusWriter{ResponseWriter: w}}
		h.ServeHTTP(sw, r)
		if code := sw.code(); code != http.StatusServiceUnavailable && !rt.documents(code) {
			undocumented(rt, code, sw.head)
		}
	})
}

// headWriter is a statusWriter that keeps the first bytes written.
type headWriter struct {
	statusWriter
	head []byte
}

func (w *headWriter) Write(b []byte) (int, error) {
	if n := min(len(b), 200-len(w.head)); n > 0 {
		w.head = append(w.head, b[:n]...)
	}
	return w.statusWriter.Write(b)
}

// statuses are the statuses the route's operation in /openapi.json
// lists: its success status, its errors, and 401 where the session key
// is needed.
func (rt *route) statuses() []int {
	s := append([]int{rt.okStatus()}, rt.errors...)
	if !rt.public && !slices.Contains(s, http.StatusUnauthorized) {
		s = append(s, http.StatusUnauthorized)
	}
	return s
}

// documents reports whether the route's operation in /openapi.json lists
// status.
func (rt *route) documents(status int) bool {
	return slices.Contains(rt.statuses(), status)
}

// okStatus is the route's success status.
func (rt *route) okStatus() int {
	if rt.status == 0 {
		return http.StatusOK
	}
	return rt.status
}

// buildHandler routes every request.
func (s *Server) buildHandler() http.Handler {
	mux := http.NewServeMux()
	s.routes = s.allRoutes()
	for _, rt := range s.routes {
		var h http.Handler = rt.h
		if undocumented != nil {
			h = checkDocumented(rt, h)
		}
		if rt.path == "/api/conversations/{conversation_id}" {
			// Its 405 is the answer of another path (/count, /search).
			h = notLiteral(h)
		}
		if !rt.public {
			h = s.requireKey(h)
		}
		mux.Handle(rt.method+" "+muxPattern(rt.path), h)
	}
	mux.HandleFunc("GET /sockets/events/{conversation_id}", s.handleEventSocket)
	mux.HandleFunc("GET /sockets/bash-events", s.handleBashSocket)
	mux.HandleFunc("GET /sockets/session/{conversation_id}", s.handleSessionSocket)
	// Without it the mux redirects a GET of /api/bash/bash_events (DELETE
	// only) to the batch route /api/bash/bash_events/, which then wants a
	// body: a method the path does not have is a 405.
	mux.HandleFunc("GET /api/bash/bash_events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, errorDetail{Detail: "Method Not Allowed"})
	})
	mux.HandleFunc("GET /openapi.json", s.handleOpenAPI)
	mux.HandleFunc("GET /docs", s.handleDocs)
	mux.HandleFunc("GET /redoc", s.handleRedoc)
	mux.HandleFunc("GET /api/init", s.handleInitNotDeferred)
	mux.HandleFunc("POST /api/init", s.handleInitNotDeferred)
	mux.HandleFunc("GET "+apidocs.Prefix, apidocs.ServeAsset)
	mux.HandleFunc("GET "+apidocs.RedirectPath, apidocs.OAuth2Redirect)
	mux.HandleFunc("/app-backends/{extension_name}", s.handleAppBackend)
	mux.HandleFunc("/app-backends/{extension_name}/{path...}", s.handleAppBackend)
	mux.HandleFunc("GET /{$}", s.handleServerInfo)
	// A known path asked with a method it does not serve answers 405 with
	// the methods it does (the document's promise), not 404.
	methods := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range s.routes {
		p := muxPattern(rt.path)
		if _, seen := allowed[p]; !seen {
			methods.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Allow", strings.Join(allowed[p], ", "))
				writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			})
		}
		allowed[p] = append(allowed[p], rt.method)
	}
	methods.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeDetail(w, http.StatusNotFound, "Not Found")
	})
	// An unknown path needs the key too, as in the reference: a caller
	// without it learns nothing of which routes exist.
	mux.Handle("/", s.requireKey(methods))
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", s.requireKey(http.HandlerFunc(s.handleMetrics)))
	}
	return s.observe(mux)
}

func (s *Server) handleAlive(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, statusResponse{Status: "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, statusResponse{Status: "ready"})
}

func (s *Server) handleServerInfo(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	idle := now.Sub(time.Unix(0, s.active.Load()))
	info := serverInfo{
		Uptime:        now.Sub(s.started).Seconds(),
		IdleTime:      idle.Seconds(),
		Title:         "gohands agent server",
		Version:       s.opts.Version,
		SDKVersion:    s.opts.Version,
		ToolsVersion:  s.opts.Version,
		PythonVersion: runtime.Version(),
		UsableTools:   tool.Registered(),
		Capabilities:  capabilities,
		// Conversations run in this process (the reference's "local");
		// a start request cannot pick another runtime.
		ConversationRuntime:           "local",
		AvailableConversationRuntimes: []string{},
		Docs:                          "/docs", Redoc: "/redoc",
		MaxForegroundTerminalTimeout: 300,
		WorkspaceVersion:             s.opts.Version,
	}
	writeJSON(w, http.StatusOK, info)
}

// capabilities are the reference's capability strings of the features
// gohands has: a start request re-sent with its conversation_id gets the
// conversation it made (200), and GET /api/tools/catalog.
var capabilities = []string{"idempotent_conversation_create_v1", "tool_catalog_v1"}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, tool.Registered())
}

// notLiteral answers 405 when /api/conversations/{conversation_id} is
// reached for /api/conversations/count or /search, routes of their own
// for GET only, with another method.
func notLiteral(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("conversation_id"); id == "count" || id == "search" {
			w.Header().Set("Allow", http.MethodGet)
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// muxPattern is the ServeMux pattern of a route's documented path: the
// tools list is its path alone, and {file_path} takes the rest of the path.
func muxPattern(path string) string {
	path = strings.NewReplacer("{file_path}", "{file_path...}").Replace(path)
	// A path ending in "/" names that path only, not the tree below it.
	if strings.HasSuffix(path, "/") {
		path += "{$}"
	}
	return path
}
