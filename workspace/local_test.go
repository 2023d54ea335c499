package workspace

import (
	"testing"

	"github.com/gohands/gohands/event"
)

func TestLocalWorkspaceJSON(t *testing.T) {
	const want = `{"working_dir":"/tmp/w","kind":"LocalWorkspace"}`
	b, err := event.MarshalKinded(&LocalWorkspace{WorkingDir: "/tmp/w"})
	if err != nil || string(b) != want {
		t.Fatalf("got %s, %v; want %s", b, err, want)
	}
	w, err := event.DecodeKinded[*LocalWorkspace](b)
	if err != nil || w.WorkingDir != "/tmp/w" {
		t.Fatalf("decode: %#v, %v", w, err)
	}
	if _, err := event.DecodeKinded[*LocalWorkspace]([]byte(`{"working_dir":"/x","extra":1,"kind":"LocalWorkspace"}`)); err == nil {
		t.Error("accepted an unknown field")
	}
}
