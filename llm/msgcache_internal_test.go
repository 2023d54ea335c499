package llm

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gohands/gohands/event"
)

// TestMessageCacheJoins checks over a random history that grows, changes
// in the middle, shrinks and has a marker moving to its end that the
// pieces Encode returns join to the encodings of all messages, that it
// encodes only messages that changed, that bytes it returned are never
// written again, and that the pieces stay few.
func TestMessageCacheJoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c MessageCache
	var msgs []event.Message
	type returned struct{ piece, copy []byte }
	var earlier []returned
	for round := range 600 {
		msgs = slices.Clone(msgs)
		changed := -1 // how many messages must be encoded, -1 if unknown
		switch op := rng.IntN(10); {
		case op < 6 || len(msgs) < 3: // the agent's step: a few more
			changed = 1 + rng.IntN(3)
			for range changed {
				msgs = append(msgs, event.UserMessage(fmt.Sprint("m", round, "-", len(msgs), "-", rng.IntN(1e6))))
			}
		case op < 8: // a marker moves: the old last changes, one more
			msgs[len(msgs)-1] = event.UserMessage(msgs[len(msgs)-1].Content[0].Text + " unmarked")
			msgs = append(msgs, event.UserMessage(fmt.Sprint("marked ", round)))
			changed = 2
		case op < 9: // one in the middle
			i := rng.IntN(len(msgs))
			msgs[i] = event.UserMessage(fmt.Sprint("replaced ", round))
			changed = 1
		default: // condensed
			msgs = append(msgs[:1:1], msgs[len(msgs)/2:]...)
		}
		var encoded []int
		pieces, err := c.Encode("k", msgs, ',', func(i int) ([]byte, error) {
			encoded = append(encoded, i)
			return fmt.Appendf(nil, `{"t":%q}`, msgs[i].Content[0].Text), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for _, m := range msgs {
			want = append(want, fmt.Appendf(nil, `{"t":%q}`, m.Content[0].Text))
		}
		if got := bytes.Join(pieces, []byte(",")); !bytes.Equal(got, bytes.Join(want, []byte(","))) {
			t.Fatalf("round %d: joined pieces differ:\n got %s\nwant %s", round, got, bytes.Join(want, []byte(",")))
		}
		if len(pieces) > maxPieces {
			t.Fatalf("round %d: %d pieces", round, len(pieces))
		}
		if round > 0 && changed >= 0 && len(encoded) != changed {
			t.Errorf("round %d: encoded %d messages, want %d", round, len(encoded), changed)
		}
		for _, r := range earlier {
			if !bytes.Equal(r.piece, r.copy) {
				t.Fatalf("round %d: a piece returned earlier was written over", round)
			}
		}
		for _, p := range pieces {
			earlier = append(earlier, returned{p, bytes.Clone(p)})
		}
	}
	// An agent's steps only add messages: their encodings stay in a few
	// long pieces without copying.
	for step := range 300 {
		msgs = append(slices.Clone(msgs), event.UserMessage(fmt.Sprint("step ", step)))
		pieces, err := c.Encode("k", msgs, ',', func(i int) ([]byte, error) { return bytes.Repeat([]byte("x"), 500), nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(pieces) > 16 {
			t.Fatalf("step %d: %d pieces for %d messages", step, len(pieces), len(msgs))
		}
	}
}
