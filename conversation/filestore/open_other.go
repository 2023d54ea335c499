//go:build !unix

package filestore

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gohands/gohands/conversation"
)

func openStore(dir string, opts *Options) (conversation.Store, error) {
	return nil, fmt.Errorf("filestore: %w on %s", errors.ErrUnsupported, runtime.GOOS)
}
