package server

import (
	"cmp"
	"slices"
	"sync"
)

// convOrder keeps the conversations sorted by creation (time, then id), the
// search's default order, so that a page of it costs O(log n + page)
// however many conversations are stored. A conversation's creation time
// never changes; it enters the order once its record is stored and leaves
// it when deleted.
type convOrder struct {
	mu  sync.RWMutex
	all []*conv // ascending
}

func compareCreated(a *conv, created, id string) int {
	return cmp.Or(cmp.Compare(a.created, created), cmp.Compare(a.id, id))
}

// add inserts the conversations cs (their created set).
func (o *convOrder) add(cs ...*conv) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(cs) > 1 {
		o.all = append(o.all, cs...)
		slices.SortFunc(o.all, func(a, b *conv) int { return compareCreated(a, b.created, b.id) })
		o.all = slices.CompactFunc(o.all, func(a, b *conv) bool { return a == b })
		return
	}
	for _, c := range cs {
		i, found := slices.BinarySearchFunc(o.all, c, func(a, c *conv) int { return compareCreated(a, c.created, c.id) })
		if !found {
			o.all = slices.Insert(o.all, i, c)
		}
	}
}

// remove takes c out of the order.
func (o *convOrder) remove(c *conv) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i, found := slices.BinarySearchFunc(o.all, c, func(a, c *conv) int { return compareCreated(a, c.created, c.id) }); found && o.all[i] == c {
		o.all = slices.Delete(o.all, i, i+1)
	}
}

func (o *convOrder) len() int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.all)
}

// page returns up to limit conversations from from (nil: the first),
// newest first when desc, and the first conversation of the next page (nil
// at the end). A from not in the order gives an empty page.
func (o *convOrder) page(from *conv, limit int, desc bool) (page []*conv, next *conv) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	n := len(o.all)
	var i int
	switch {
	case from != nil:
		var found bool
		i, found = slices.BinarySearchFunc(o.all, from, func(a, c *conv) int { return compareCreated(a, c.created, c.id) })
		if !found || o.all[i] != from {
			return nil, nil
		}
	case desc:
		i = n - 1
	}
	if desc {
		for ; i >= 0 && len(page) < limit; i-- {
			page = append(page, o.all[i])
		}
		if i >= 0 {
			next = o.all[i]
		}
		return page, next
	}
	for ; i < n && len(page) < limit; i++ {
		page = append(page, o.all[i])
	}
	if i < n {
		next = o.all[i]
	}
	return page, next
}
