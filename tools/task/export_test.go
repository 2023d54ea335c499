package task

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
)

// CopyStoredForTest copies the conversation stored in base/dirName to the
// id to, as an older gohands would have stored it.
func CopyStoredForTest(t *testing.T, base, dirName, to string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(base, dirName, filestore.BaseStateFile))
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatal(err)
	}
	b := filestore.NewBackend(base, nil)
	if err := copyStored(context.Background(), b, head.ID, b, to); err != nil {
		t.Fatal(err)
	}
}
