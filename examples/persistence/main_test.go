package main

import (
	"context"
	"github.com/gohands/gohands/conversation"
	"os"

	"github.com/gohands/gohands/conversation/filestore"
)

// Example writes a conversation, reopens it from disk and prints its events.
func Example() {
	base, err := os.MkdirTemp("", "gohands-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	const id = "6a0f4e2c-1b3d-4c5e-8f70-9a1b2c3d4e5f"
	dir := filestore.Dir(base, id)
	if err := write(dir, id); err != nil {
		panic(err)
	}
	store, err := filestore.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	log, err := conversation.LoadLog(context.Background(), store)
	if err != nil {
		panic(err)
	}
	if err := printEvents(context.Background(), os.Stdout, log); err != nil {
		panic(err)
	}
	// Output:
	// 0 MessageEvent      user        user: "Say hello, then stop."
	// 1 ActionEvent       agent       echo({"text": "hello"})
	// 2 ObservationEvent  environment echo -> "hello"
	// 3 MessageEvent      agent       assistant: "Done: the tool said hello."
}
