package wire

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialBytes checks the word-at-a-time scan against a byte loop:
// its lowest flag must be the first special byte, whatever surrounds it.
func TestSpecialBytes(t *testing.T) {
	special := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }
	rng := rand.New(rand.NewPCG(1, 2))
	var w [8]byte
	for n := range 200000 {
		for k := range w {
			switch rng.IntN(4) {
			case 0: // bytes next to the targets, where borrows bite
				w[k] = []byte{0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 0x7f, 0x80, 0xff, 0}[rng.IntN(12)]
			default:
				w[k] = byte(rng.IntN(256))
			}
		}
		if n < 256*8 { // every byte value at every position
			w[n/256] = byte(n % 256)
		}
		want := 8
		for k, c := range w {
			if special(c) {
				want = k
				break
			}
		}
		m := specialBytes(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) / 8
		}
		if got != want {
			t.Fatalf("% x: first special byte at %d, want %d", w, got, want)
		}
	}
}
