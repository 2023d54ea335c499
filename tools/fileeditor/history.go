package fileeditor

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// history keeps, per file, the raw bytes each edit replaced, newest last, so
// undo restores a file exactly (encoding, BOM and line endings included).
// Entries live in a private temporary directory rather than in memory: ten
// steps of a 10 MB file would otherwise stay on the heap for the life of the
// conversation.
type history struct {
	limit int

	mu      sync.Mutex
	dir     string              // made on first use
	entries map[string][]string // resolved path -> entry files, oldest first
	next    int                 // names entry files uniquely
}

// push records content as the state of path before an edit, forgetting the
// oldest entry past the limit.
func (h *history) push(path string, content []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		dir, err := os.MkdirTemp("", "gohands-fileeditor-")
		if err != nil {
			return err
		}
		h.dir = dir
		h.entries = make(map[string][]string)
	}
	name := filepath.Join(h.dir, strconv.Itoa(h.next))
	h.next++
	if err := os.WriteFile(name, content, 0o600); err != nil {
		return err
	}
	list := append(h.entries[path], name)
	for len(list) > h.limit {
		os.Remove(list[0])
		list = list[1:]
	}
	h.entries[path] = list
	return nil
}

// pop removes and returns the newest entry of path; ok is false when there
// is none.
func (h *history) pop(path string) (content []byte, ok bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.entries[path]
	if len(list) == 0 {
		return nil, false, nil
	}
	name := list[len(list)-1]
	if content, err = os.ReadFile(name); err != nil {
		return nil, false, err
	}
	os.Remove(name)
	if list = list[:len(list)-1]; len(list) == 0 {
		delete(h.entries, path)
	} else {
		h.entries[path] = list
	}
	return content, true, nil
}

// unpop puts back an entry that pop returned but could not be applied.
func (h *history) unpop(path string, content []byte) error {
	return h.push(path, content)
}

// close deletes all entries.
func (h *history) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		return nil
	}
	err := os.RemoveAll(h.dir)
	h.dir, h.entries = "", nil
	return err
}
