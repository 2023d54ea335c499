package llmtest

import (
	"errors"
	"net/http"
)

func (s *Server) writeResponses(rw http.ResponseWriter, t *turn) error { return errors.New("todo") }
func (s *Server) writeAnthropic(rw http.ResponseWriter, t *turn) error { return errors.New("todo") }
func (s *Server) writeGemini(rw http.ResponseWriter, t *turn) error    { return errors.New("todo") }
