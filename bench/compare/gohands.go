package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/preset"
)

// replayGohands opens the conversation in dir and decodes every event, as
// reference.py's replay does; it returns the time taken and the number
// of events.
func replayGohands(dir string) (time.Duration, int, error) {
	start := time.Now()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		return 0, 0, err
	}
	st, err := conversation.Open(s, nil)
	if err != nil {
		s.Close()
		return 0, 0, err
	}
	defer st.Close()
	evs := st.Events()
	n := evs.Len()
	for i := range n {
		if _, err := evs.Event(i); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start), n, nil
}

// resumeGohands continues conversation id stored under base with a
// message and runs it, as reference.py's resume does; it returns when it
// started.
func resumeGohands(ctx context.Context, modelURL, base, ws, id string) (time.Time, error) {
	start := time.Now()
	cfg := llm.DefaultConfig("openai/bench")
	cfg.BaseURL = modelURL + "/v1"
	cfg.APIKey = secret.New("bench")
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg, nil), ws, &conversation.LocalOptions{
		ID: id, Backend: filestore.NewBackend(base, nil),
	})
	if err != nil {
		return start, fmt.Errorf("resume: %w", err)
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage("go on")); err != nil {
		return start, err
	}
	return start, conv.Run(ctx)
}
