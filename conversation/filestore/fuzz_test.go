//go:build unix

package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
)

const damageEvents = 8

// damageDir applies the damage ops describes to a conversation directory
// holding damageEvents events, and returns the lowest event index it
// touched (damageEvents if none): every event before it must survive.
func damageDir(dir string, evs []event.Event, ops []byte) int {
	low := damageEvents
	path := func(i int) string { return eventPath(dir, i, evs[i].EventBase().ID) }
	for len(ops) >= 3 {
		op, i, arg := ops[0]%8, int(ops[1])%damageEvents, int(ops[2])
		ops = ops[3:]
		switch op {
		case 0: // truncate an event file
			b, _ := os.ReadFile(path(i))
			os.WriteFile(path(i), b[:min(len(b), arg*len(b)/256)], 0o644)
			low = min(low, i)
		case 1: // garbage in place
			b, _ := os.ReadFile(path(i))
			if len(b) > 0 {
				b[arg%len(b)] ^= byte(arg | 1)
				os.WriteFile(path(i), b, 0o644)
				low = min(low, i)
			}
		case 2: // delete
			os.Remove(path(i))
			low = min(low, i)
		case 3: // a copy under another index
			b, _ := os.ReadFile(path(i))
			j := arg % (damageEvents + 3)
			os.WriteFile(eventPath(dir, j, evs[i].EventBase().ID), b, 0o644)
			if j < damageEvents && j != i {
				low = min(low, j)
			}
		case 4: // the index cache cut
			b, _ := os.ReadFile(filepath.Join(dir, filestore.IndexFile))
			os.WriteFile(filepath.Join(dir, filestore.IndexFile), b[:min(len(b), arg*len(b)/256)], 0o644)
		case 5: // garbage in the index cache
			b, _ := os.ReadFile(filepath.Join(dir, filestore.IndexFile))
			if len(b) > 0 {
				b[arg*len(b)/256] ^= byte(arg | 1)
				os.WriteFile(filepath.Join(dir, filestore.IndexFile), b, 0o644)
			}
		case 6: // the base state cut
			p := filepath.Join(dir, filestore.BaseStateFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:min(len(b), arg*len(b)/256)], 0o644)
		case 7: // a stray journal
			os.WriteFile(filepath.Join(dir, filestore.JournalFile), fmt.Appendf(nil, "GW%x", ops), 0o644)
		}
	}
	return low
}

// checkDamaged opens, reads, checks and repairs a damaged directory: each
// step must end in a clean result, a repair or an ErrDamaged error, never
// a panic, and no event before the damage may be lost.
func checkDamaged(t *testing.T, ops []byte) {
	dir, evs := writeLog(t, damageEvents)
	if len(ops) > 0 && ops[0]&0x80 != 0 {
		os.Remove(filepath.Join(dir, filestore.PrevBaseStateFile)) // a base state written once
	}
	low := damageDir(dir, evs, ops)

	s, err := openLog(dir, nil)
	switch {
	case errors.Is(err, filestore.ErrDamaged):
	case err != nil:
		t.Fatalf("ops %x: open: unclear error %v", ops, err)
	default:
		if s.Len() < low {
			t.Fatalf("ops %x: %d events open, %d were intact: silent loss", ops, s.Len(), low)
		}
		for i := range s.Len() {
			raw, err := s.Raw(i)
			if err == nil {
				_, err = event.Unmarshal(raw)
			}
			if err != nil && i < low {
				t.Fatalf("ops %x: intact event %d: %v", ops, i, err)
			}
			if err != nil && !errors.Is(err, filestore.ErrDamaged) && !errors.Is(err, event.ErrUnknownKind) {
				t.Logf("ops %x: event %d: %v", ops, i, err) // decoding garbage: the store vouched only for size and sum
			}
		}
		s.Close()
	}
	r, err := filestore.Repair(dir)
	if err != nil {
		t.Fatalf("ops %x: repair: %v", ops, err)
	}
	if r.Events < low {
		t.Fatalf("ops %x: repair kept %d events, %d were intact", ops, r.Events, low)
	}
	st, err := conversation.Open(context.Background(), openFile(t, dir), nil)
	if err != nil {
		t.Fatalf("ops %x: open after repair: %v", ops, err)
	}
	st.Close()
}

func FuzzStoreDir(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 7, 100}, {1, 3, 9}, {2, 4, 0}, {3, 2, 9}, {3, 1, 5}, {4, 0, 128}, {5, 0, 77},
		{6, 0, 100}, {7, 0, 0, 1, 2, 3}, {2, 7, 0, 0, 6, 10}, {1, 0, 0, 1, 7, 255},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 30 {
			ops = ops[:30]
		}
		checkDamaged(t, ops)
	})
}

// TestStoreDirDamageRandom runs random damage (truncation, garbage,
// deletion, duplication, cache and base-state damage): 60 cases in short
// mode, 1000 otherwise.
func TestStoreDirDamageRandom(t *testing.T) {
	n := 1000
	if testenv.Short() {
		n = 60
	}
	rng := rand.New(rand.NewPCG(17, uint64(n)))
	for k := range n {
		ops := make([]byte, 3*(1+rng.IntN(4)))
		for i := range ops {
			ops[i] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprint(k), func(t *testing.T) { checkDamaged(t, ops) })
	}
}
