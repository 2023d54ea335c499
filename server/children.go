package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// childRequest is the reference's StartChildConversationRequest.
type childRequest struct {
	Task      *string `json:"task" description:"The child's first user message: a self-contained brief (required, not empty)."`
	Title     *string `json:"title" description:"The child conversation's title."`
	Isolation *string `json:"isolation" description:"worktree (default: a git worktree of the parent's workspace when it is a repository) or shared (the parent's directory)."`
}

// childResponse is the reference's StartChildConversationResponse.
type childResponse struct {
	ConversationID       string  `json:"conversation_id"`
	ParentConversationID string  `json:"parent_conversation_id"`
	Status               string  `json:"status"`
	Title                *string `json:"title"`
	URL                  *string `json:"url"`
	Workspace            *string `json:"workspace"`
	Isolation            *string `json:"isolation"`
}

func (s *Server) childRoutes() []*route {
	return []*route{
		{method: "POST", path: "/api/conversations/{conversation_id}/children", summary: "Start a child conversation (201) that runs the task with the parent's settings", tag: "Conversations", body: childRequest{}, resp: childResponse{}, status: 201, errors: []int{404, 422, 429}, h: handle(s, nil, s.handleStartChild)},
	}
}

// handleStartChild starts a child of the conversation: the parent's agent,
// workspace (or a git worktree of it), confirmation policy, analyzer,
// limits, hooks, client tools and tags, a fresh history whose first
// message is the task, run at once. The parent is not waited for nor
// blocked: the child runs on its own, as any conversation.
// The answer's status is the child's once its run has begun: running (or
// already further). 1.58.2 reads it before its run has set it, so it
// mostly answers idle for a child that is running. Without a title asked
// for, the answer's title is null or the one the autotitle made
// meanwhile, whichever came first, on both servers.
func (s *Server) handleStartChild(in *request[none, childRequest]) (any, error) {
	req := &in.body
	switch {
	case req.Task == nil:
		return nil, &invalidError{loc: []any{"body", "task"}, typ: "missing", msg: "Field required"}
	case *req.Task == "":
		return nil, &invalidError{loc: []any{"body", "task"}, typ: "string_too_short", msg: "String should have at least 1 character"}
	}
	isolation := "worktree"
	if req.Isolation != nil {
		isolation = *req.Isolation
	}
	if isolation != "worktree" && isolation != "shared" {
		return nil, &invalidError{loc: []any{"body", "isolation"}, typ: "literal_error", msg: "Input should be 'worktree' or 'shared'"}
	}
	in.missing = http.StatusNotFound
	parent, plc, err := in.load()
	if me := (*missingError)(nil); errors.As(err, &me) {
		return nil, statusErr(http.StatusNotFound, "Parent conversation not found") // 1.58.2's detail
	}
	if err != nil {
		return nil, err
	}
	// A full server refuses before anything is made, as a start does.
	if !s.reserveRun() {
		return nil, errTooManyRuns
	}
	reserved := true
	defer func() {
		if reserved {
			s.runs.Add(-1)
		}
	}()

	// The parent's agent, copied so that the child's additions (client
	// tools, worktree guidance) do not reach the parent's.
	ag, ok := plc.State().Fields().Agent.(conversation.Agent)
	if !ok {
		return nil, statusErr(http.StatusUnprocessableEntity, "The parent conversation's agent cannot run a child")
	}
	if a, ok := ag.(*agent.Agent); ok {
		o := a.Options()
		cp := a.WithOptions(&o)
		cp.Tools = slices.Clone(a.Tools)
		ag = cp
	}
	parent.mu.Lock()
	pm := parent.meta
	parent.mu.Unlock()
	parentID := parent.id
	worktree := isolation == "worktree"
	maxIter, stuck := pm.MaxIterations, pm.StuckDetection
	sr := &startRequest{
		Workspace:            pm.Workspace,
		MaxIterations:        &maxIter,
		StuckDetection:       &stuck,
		ConfirmationPolicy:   pm.ConfirmationPolicy,
		SecurityAnalyzer:     pm.SecurityAnalyzer,
		ToolModuleQualnames:  pm.ToolModuleQualnames,
		ClientTools:          pm.ClientTools,
		HookConfig:           pm.HookConfig,
		Tags:                 pm.Tags,
		UserID:               pm.UserID,
		ParentConversationID: &parentID,
		Worktree:             &worktree,
		InitialMessage: &initialMessage{
			Role: "user", Content: []event.Content{event.Text(*req.Task)}, Run: true,
		},
	}
	if ws := pm.workingDir(); ws == "" {
		sr.Workspace, _ = json.Marshal(map[string]string{"working_dir": plc.WorkingDir(), "kind": "LocalWorkspace"})
	}
	ctx := in.r.Context()
	res, err := s.startAgent(ctx, sr, nil, ag, nil)
	if err != nil {
		return nil, err
	}
	child := res.c
	if req.Title != nil {
		child.mu.Lock()
		child.meta.Title = req.Title
		child.mu.Unlock()
		if err := child.saveMeta(); err != nil {
			return nil, err
		}
	}
	lc, err := child.hold(ctx)
	if err != nil {
		return nil, err
	}
	if err := lc.SendMessage(ctx, event.Message{Role: event.RoleUser, Content: sr.InitialMessage.Content}); err != nil {
		return nil, err
	}
	reserved = false // startRun takes the slot, or releases it
	if err := child.startRun(ctx, true); err != nil {
		return nil, err
	}
	child.mu.Lock()
	cm := child.meta
	child.mu.Unlock()
	dir := cm.workingDir()
	applied := "shared"
	if dir != pm.workingDir() {
		applied = "worktree"
	}
	return reply{http.StatusCreated, childResponse{
		ConversationID:       child.id,
		ParentConversationID: parentID,
		Status:               string(lc.State().Fields().ExecutionStatus),
		Title:                cm.Title,
		Workspace:            &dir,
		Isolation:            &applied,
	}}, nil
}

// chargeParent records, once a child's run has ended, the child's model
// costs in its parent's stats under "child:<id>" (the child's whole
// figure, replacing the last: it is cumulative), as the task tool records
// a sub-agent's under "task:<id>": the parent's stats, and a budget it is
// run on, count what its children spent. A grandchild's costs reach the
// grandparent through the child. The 1.58.2 reference keeps a child's
// costs apart from its parent's. Neither agent server keeps a per-run
// budget, so there is none for a child to share.
func (s *Server) chargeParent(child *conv, lc *conversation.LocalConversation) {
	child.mu.Lock()
	pid := child.meta.ParentConversationID
	child.mu.Unlock()
	if pid == nil || *pid == child.id {
		return
	}
	parent := s.lookup(*pid)
	if parent == nil {
		return // deleted: nothing to charge
	}
	ctx := context.Background()
	plc, err := parent.load(ctx)
	if err != nil {
		s.log.Warn("charging a child's costs to its parent", "conversation", child.id, "parent", *pid, "err", err)
		return
	}
	var total llm.Metrics
	for _, id := range slices.Sorted(maps.Keys(lc.State().Fields().Stats.UsageToMetrics)) {
		if mt := lc.State().Fields().Stats.UsageToMetrics[id]; mt != nil {
			total.Merge(*mt)
			total.ModelName = cmp.Or(total.ModelName, mt.ModelName)
		}
	}
	err = plc.State().Update(func(f *conversation.Fields) error {
		next := maps.Clone(f.Stats.UsageToMetrics)
		if next == nil {
			next = event.Map[string, *llm.Metrics]{}
		}
		next[ChildUsagePrefix+child.id] = &total
		f.Stats.UsageToMetrics = next
		return nil
	})
	if err != nil {
		s.log.Warn("charging a child's costs to its parent", "conversation", child.id, "parent", *pid, "err", err)
	}
}

// ChildUsagePrefix starts the usage id under which a parent's stats hold
// a child conversation's costs.
const ChildUsagePrefix = "child:"
