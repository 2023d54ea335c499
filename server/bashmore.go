package server

import (
	"errors"
	"net/http"
	"slices"
	"strings"
)

// bashMoreRoutes are the bash routes beside search, get, start, execute
// and clear: the batch get and the stop of one command.
func (s *Server) bashMoreRoutes() []*route {
	return []*route{
		{method: "GET", path: "/api/bash/bash_events/", summary: "Get bash events by id (a JSON list of ids as the body; null for unknown ids)", tag: "Bash", body: []string{}, resp: []*bashEvent{}, errors: []int{422}, nullableItems: true, h: handle(s, nil, s.handleBashBatch)},
		{method: "POST", path: "/api/bash/bash_commands/{command_id}/stop", summary: "Stop a running command (success for a finished one, 404 for an unknown id)", tag: "Bash", resp: successResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleBashStop)},
	}
}

// handleBashBatch answers the events with the ids of the body, in order,
// null for an unknown id (the reference reads the list from the body even
// on this GET).
func (s *Server) handleBashBatch(in *request[none, []string]) (any, error) {
	s.bash.mu.Lock()
	defer s.bash.mu.Unlock()
	out := make([]*bashEvent, len(in.body))
	for i, id := range in.body {
		if j := slices.IndexFunc(s.bash.events, func(e *bashEvent) bool { return e.ID == id }); j >= 0 {
			out[i] = s.bash.events[j]
		}
	}
	return out, nil
}

func (s *Server) handleBashStop(in *request[none, none]) (any, error) {
	u, err := parseUUID(in.r.PathValue("command_id"))
	if err != nil {
		return nil, &invalidError{loc: []any{"path", "command_id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
	}
	id := strings.ReplaceAll(u, "-", "")
	if s.bash.stop(id) {
		return ok, nil
	}
	s.bash.mu.Lock()
	known := slices.ContainsFunc(s.bash.events, func(e *bashEvent) bool { return e.ID == id })
	s.bash.mu.Unlock()
	if known {
		return ok, nil // finished already: the stop is done
	}
	return nil, statusErr(http.StatusNotFound, "Not Found")
}

// errBashStopped is why a command stopped by request ended.
var errBashStopped = errors.New("stopped by request")

// stop cancels the running command id; false when none runs with it.
func (b *bashService) stop(id string) bool {
	b.mu.Lock()
	cancel := b.running[id]
	b.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel(errBashStopped)
	return true
}
