// Command persistence is the smallest demonstration of gohands' core: it
// writes a conversation (a user message, a tool call and its result, an
// agent reply) to disk in the OpenHands layout, reopens it as a new process
// would, and prints its events.
//
//	go run ./examples/persistence [-dir DIR]
//
// Without -dir it works in a temporary directory that it removes at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/workspace"
	"github.com/google/uuid"
)

// agentConfig stands in for an agent definition; a real program uses the
// agent package's Agent. It is registered under its own kind name.
type agentConfig struct {
	Model string `json:"model"`
}

// echoAction and echoObservation are a minimal tool's argument and result.
type echoAction struct {
	Text string `json:"text"`
}

type echoObservation struct {
	event.ObservationBase
}

func init() {
	event.RegisterKind[agentConfig]("ExampleAgent")
	event.RegisterKind[echoAction]("EchoAction")
	event.RegisterKind[echoObservation]("EchoObservation")
}

func main() {
	dir := flag.String("dir", "", "persistence directory (default: a temporary directory, removed on exit)")
	flag.Parse()
	if err := run(*dir); err != nil {
		log.Fatal(err)
	}
}

func run(base string) error {
	if base == "" {
		tmp, err := os.MkdirTemp("", "gohands-persistence-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		base = tmp
	}
	id := uuid.NewString()
	dir := filestore.Dir(base, id)

	// Write a conversation.
	if err := write(dir, id); err != nil {
		return err
	}

	// Reopen it, as a new process would, and print what is on disk.
	store, err := filestore.Open(dir, nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := conversation.OpenID(ctx, store, id, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	f := st.Fields()
	fmt.Printf("conversation %s in %s\nstatus %s, %d events:\n", f.ID, dir, f.ExecutionStatus, st.Events().Len())
	if err := printEvents(ctx, os.Stdout, st.Events()); err != nil {
		return err
	}
	names, _ := filepath.Glob(filepath.Join(dir, filestore.EventsDir, "event-*.json"))
	fmt.Printf("files: %s and %d event files\n", filestore.BaseStateFile, len(names))
	return nil
}

// printEvents prints one line per event of the log.
func printEvents(ctx context.Context, w io.Writer, log *conversation.Log) error {
	for i := range log.Len() {
		ev, err := log.Event(ctx, i)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d %-17s %-11s %s\n", i, kindOf(ev), ev.EventBase().Source, describe(ev))
	}
	return nil
}

func write(dir, id string) error {
	store, err := filestore.Open(dir, nil)
	if err != nil {
		return err
	}
	f := conversation.NewFields(id, &agentConfig{Model: "gpt-4o"}, &workspace.Local{WorkingDir: "."})
	st, err := conversation.Create(context.Background(), store, f, nil)
	if err != nil {
		return err
	}
	user := &event.MessageEvent{
		Base:       event.NewBase(event.SourceUser),
		LLMMessage: event.Message{Role: "user", Content: []event.Content{event.Text("Say hello, then stop.")}},
	}
	action := &event.ActionEvent{
		Base:       event.NewBase(event.SourceAgent),
		Thought:    []event.Content{event.Text("I'll use the echo tool.")},
		Action:     &echoAction{Text: "hello"},
		ToolName:   "echo",
		ToolCallID: "call_1",
		ToolCall:   event.ToolCall{ID: "call_1", Name: "echo", Arguments: `{"text": "hello"}`, Origin: "completion"},
	}
	obs := &event.ObservationEvent{
		Base:        event.NewBase(event.SourceEnvironment),
		ToolName:    "echo",
		ToolCallID:  "call_1",
		Observation: &echoObservation{event.ObservationBase{Content: []event.Content{event.Text("hello")}}},
		ActionID:    action.ID,
	}
	reply := &event.MessageEvent{
		Base:       event.NewBase(event.SourceAgent),
		LLMMessage: event.Message{Role: "assistant", Content: []event.Content{event.Text("Done: the tool said hello.")}},
	}
	err = st.Do(func(tx *conversation.Tx) error {
		tx.Fields().ExecutionStatus = conversation.StatusRunning
		for _, e := range []event.Event{user, action, obs, reply} {
			if _, err := tx.Append(e); err != nil {
				return err
			}
		}
		tx.Fields().ExecutionStatus = conversation.StatusFinished
		return nil
	})
	if err != nil {
		return err
	}
	return st.Close()
}

func kindOf(e event.Event) string {
	k, _ := event.KindOf(e)
	return k
}

func describe(e event.Event) string {
	switch v := e.(type) {
	case *event.MessageEvent:
		if len(v.LLMMessage.Content) > 0 {
			return fmt.Sprintf("%s: %q", v.LLMMessage.Role, v.LLMMessage.Content[0].Text)
		}
	case *event.ActionEvent:
		return fmt.Sprintf("%s(%s)", v.ToolName, v.ToolCall.Arguments)
	case *event.ObservationEvent:
		if c := v.Observation.Obs().Content; len(c) > 0 {
			return fmt.Sprintf("%s -> %q", v.ToolName, c[0].Text)
		}
	}
	return ""
}
