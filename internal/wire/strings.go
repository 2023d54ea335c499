package wire

import "unsafe"

// Strings copies decoded strings into shared blocks: one allocation per
// block instead of one per string. A decoder given one (Decoder.Strings)
// takes the strings it returns from it; its zero value is ready to use,
// and a nil *Strings allocates each string on its own.
//
// A block stays in memory while any string in it does, so it suits
// values decoded together and kept together (the events of one replay),
// not a long-lived few among many dropped ones: blocks are small
// (stringsBlock) and a longer string gets its own allocation. A Strings
// is for one goroutine at a time; the strings it returns are immutable
// and may be shared freely.
type Strings struct {
	block []byte
}

// stringsBlock is the size of a block, and stringsMax the longest string
// copied into one.
const (
	stringsBlock = 4 << 10
	stringsMax   = 256
)

// Copy returns b as a string.
func (s *Strings) Copy(b []byte) string {
	if s == nil || len(b) == 0 || len(b) > stringsMax {
		return string(b)
	}
	if len(b) > cap(s.block)-len(s.block) {
		s.block = make([]byte, 0, stringsBlock)
	}
	start := len(s.block)
	s.block = append(s.block, b...)
	// The bytes from start on are never written again: append only adds
	// after them, and a full block is replaced, not reused.
	return unsafe.String(&s.block[start], len(b))
}
