//go:build unix && !linux

package filestore

import "errors"

// mapJournal is only implemented on Linux; elsewhere appends use pwrite.
func mapJournal(fd, size int) ([]byte, error) { return nil, errors.ErrUnsupported }
