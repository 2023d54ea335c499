package server

import (
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// family indexes child conversations by their parent's id, so a listing
// of conversations costs O(page), not O(page × stored): each item names
// its sub_conversation_ids. It holds ids, not conversations: a child
// deleted by a path that does not forget it is skipped when read, and
// dropped then.
//
// Its lock is taken last: after Server.mu and conv.mu, never before.
type family struct {
	mu   sync.Mutex
	kids map[string]map[string]struct{} // parent id → child ids
}

// newConv returns the record of a stored conversation.
func (s *Server) newConv(id string, m storedMeta) *conv {
	c := &conv{s: s, id: id, created: m.CreatedAt}
	c.mu.Lock()
	c.setMeta(m)
	c.mu.Unlock()
	return c
}

// setMeta makes m the conversation's record and files it under its
// parent. Called with c.mu held.
func (c *conv) setMeta(m storedMeta) {
	c.meta = m
	parent := ""
	if p := m.ParentConversationID; p != nil {
		if u, err := uuid.Parse(*p); err == nil {
			parent = u.String()
		}
	}
	if parent == c.parent {
		return
	}
	f := &c.s.kids
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.parent != "" {
		f.drop(c.parent, c.id)
	}
	if parent != "" {
		if f.kids == nil {
			f.kids = make(map[string]map[string]struct{})
		}
		set := f.kids[parent]
		if set == nil {
			set = make(map[string]struct{})
			f.kids[parent] = set
		}
		set[c.id] = struct{}{}
	}
	c.parent = parent
}

// forget removes a deleted conversation from its parent's children
// (unless a conversation of the same id has taken its place meanwhile).
// What it was a parent of stays: nobody asks a deleted parent.
func (s *Server) forgetChild(c *conv) {
	c.mu.Lock()
	parent := c.parent
	c.mu.Unlock()
	if parent == "" {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if other := s.convs[c.id]; other != nil && other != c {
		return
	}
	s.kids.mu.Lock()
	s.kids.drop(parent, c.id)
	s.kids.mu.Unlock()
}

// drop removes child from parent's set. Called with f.mu held.
func (f *family) drop(parent, child string) {
	set := f.kids[parent]
	delete(set, child)
	if len(set) == 0 {
		delete(f.kids, parent)
	}
}

// childrenOf lists the conversations whose parent is id, oldest first.
func (s *Server) childrenOf(id string) []string {
	f := &s.kids
	f.mu.Lock()
	ids := make([]string, 0, len(f.kids[id]))
	for k := range f.kids[id] {
		ids = append(ids, k)
	}
	f.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	type child struct{ id, created string }
	out := make([]child, 0, len(ids))
	var stale []string
	for _, k := range ids {
		s.mu.RLock()
		c := s.convs[k]
		s.mu.RUnlock()
		if c == nil {
			stale = append(stale, k)
			continue
		}
		c.mu.Lock()
		created, gone, parent := c.meta.CreatedAt, c.gone, c.parent
		c.mu.Unlock()
		if !gone && parent == id {
			out = append(out, child{k, created})
		}
	}
	if len(stale) > 0 {
		// Deleted by a path that did not forget them (a failed create, a
		// shared catalog's prune), unless one of the same id came back
		// meanwhile: a conversation is filed while it is in s.convs, or
		// under s.mu just before it is added.
		s.mu.RLock()
		f.mu.Lock()
		for _, k := range stale {
			if s.convs[k] == nil {
				f.drop(id, k)
			}
		}
		f.mu.Unlock()
		s.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b child) int {
		if a.created != b.created {
			return strings.Compare(a.created, b.created)
		}
		return strings.Compare(a.id, b.id)
	})
	ids = ids[:len(out)]
	for i, c := range out {
		ids[i] = c.id
	}
	return ids
}
