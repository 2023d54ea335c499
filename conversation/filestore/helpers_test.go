//go:build unix

package filestore_test

import (
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
)

func openFile(t testing.TB, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
