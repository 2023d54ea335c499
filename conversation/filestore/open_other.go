//go:build !unix

package filestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

func openStore(dir string, opts *Options) (conversation.Store, error) {
	return nil, fmt.Errorf("filestore: %w on %s", errors.ErrUnsupported, runtime.GOOS)
}

func readEvents(evdir string) ([]event.Event, error) {
	names, err := eventFiles(evdir)
	if err != nil {
		return nil, err
	}
	var out []event.Event
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(evdir, name))
		if err != nil {
			return out, err
		}
		e, err := event.Unmarshal(data)
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, e)
	}
	return out, nil
}
