package conversation_test

import (
	"context"
	"fmt"
	"github.com/gohands/gohands/conversation/internal/convtest"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/workspace"
)

// A State keeps a conversation's fields and its event log. Appends stamp
// each event's parent and move the event tree's HEAD; Update changes fields
// and saves them.
func ExampleState() {
	store := conversation.NewMemoryStore() // or filestore.Open(dir, nil)
	f := conversation.NewFields("6a0f4e2c-1b3d-4c5e-8f70-9a1b2c3d4e5f", convtest.NewAgent(), &workspace.Local{WorkingDir: "/src"})
	st, err := conversation.Create(context.Background(), store, f, nil)
	if err != nil {
		panic(err)
	}
	first := &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.Message{Role: "user", Content: []event.Content{event.Text("hello")}}}
	second := &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
	st.Append(first)
	st.Append(second)
	st.Update(func(f *conversation.Fields) error {
		f.ExecutionStatus = conversation.StatusPaused
		return nil
	})
	fmt.Println(st.Events().Len(), "events")
	fmt.Println("second's parent is first:", second.ParentID == first.ID)
	fmt.Println("HEAD is second:", st.Fields().LeafEventID == second.ID)
	fmt.Println("status:", st.Fields().ExecutionStatus)
	// Output:
	// 2 events
	// second's parent is first: true
	// HEAD is second: true
	// status: paused
}
