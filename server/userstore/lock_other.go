//go:build !unix

package userstore

import (
	"os"
	"sync"
)

// lockMu stands in for the advisory file lock where there is none: it
// serialises this process's writers only.
var lockMu sync.Mutex

func lockFile(*os.File) (unlock func(), err error) {
	lockMu.Lock()
	return lockMu.Unlock, nil
}
