package server

import "github.com/gohands/gohands/api/protocol"

// A conversation's runtime (the reference 1.58's /runtime routes and
// ConversationInfo.runtime_info): gohands runs every conversation in its
// own process (or, with --runtime docker, in a container it starts on
// demand), so the runtime is always there to resume, as the reference's
// local registry reports.

type runtimeInfo = protocol.RuntimeInfo

// availableRuntime is the runtime of every conversation this server holds.
var availableRuntime = runtimeInfo{RuntimeStatus: "available", CanResume: true}

// availableRuntimeJSON is availableRuntime encoded, as conv.info writes it.
const availableRuntimeJSON = `{"runtime_status":"available","can_resume":true,"runtime_error":null}`

func (s *Server) convRuntimeRoutes() []*route {
	const conv = "/api/conversations/{conversation_id}"
	return []*route{
		{method: "GET", path: conv + "/runtime", summary: "The conversation's runtime: whether it can run", tag: "Conversations", resp: runtimeInfo{}, errors: []int{404, 422}, h: handle(s, nil, s.handleRuntimeInfo)},
		// Nothing to provision: the runtime is the server's own process.
		{method: "POST", path: conv + "/runtime/reprovision", summary: "Reprovision the conversation's runtime (nothing to do here: its state)", tag: "Conversations", resp: runtimeInfo{}, errors: []int{404, 422}, h: handle(s, nil, s.handleRuntimeInfo)},
	}
}

func (s *Server) handleRuntimeInfo(in *request[none, none]) (any, error) {
	if _, err := in.find(); err != nil {
		return nil, err
	}
	return availableRuntime, nil
}
