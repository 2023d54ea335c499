package conversation

import (
	"reflect"

	"github.com/gohands/gohands/secret"
)

// slotCache keeps a State's last encodings of the agent, the workspace and
// the security analyzer, the large members of base_state.json that rarely
// change, so that a commit that changes the stats (one per model call)
// encodes those again and not the whole agent. An entry is keyed by the
// slot's value, a pointer: slot values are immutable and replaced, never
// modified (Fields.clone), so a new value is a new pointer and misses the
// cache. Values that are not pointers are never cached. It is used under
// the State's mu.
//
// Encodings are kept apart for the redacted form and for the cipher's.
// A cached encrypted member keeps the Fernet tokens of its first encoding;
// they decrypt to the same secrets as a fresh encoding's would.
type slotCache struct {
	plain, ciphered [len(cachedSlots)]slotEnc
}

type slotEnc struct {
	v   any // the slot's value when encoded, a pointer
	val []byte
}

// cachedSlots are the JSON keys of the cached slots.
var cachedSlots = [...]string{"agent", "workspace", "security_analyzer"}

// fieldKeys are the JSON keys of Fields in the order they are written.
var fieldKeys = func() []string {
	t := reflect.TypeFor[Fields]()
	keys := make([]string, 0, t.NumField())
	for field := range t.Fields() {
		tag := field.Tag.Get("json")
		for j := range len(tag) {
			if tag[j] == ',' {
				tag = tag[:j]
				break
			}
		}
		keys = append(keys, tag)
	}
	return keys
}()

func slotValues(f *Fields) [len(cachedSlots)]any {
	return [...]any{f.Agent, f.Workspace, f.SecurityAnalyzer}
}

// encode is encodeMembers with the cache: the cached slots whose value did
// not change are taken from it, the others encoded and cached. The result
// is byte for byte encodeMembers's (TestSlotCacheEncoding).
func (sc *slotCache) encode(f *Fields, c *secret.Cipher) ([]member, error) {
	ents := &sc.plain
	if c != nil {
		ents = &sc.ciphered
	}
	vals := slotValues(f)
	var hit [len(cachedSlots)]bool
	w := *f
	someHit := false
	for i, v := range vals {
		if v == nil || reflect.TypeOf(v).Kind() != reflect.Pointer {
			continue
		}
		// Both are pointers when their types match, so == cannot panic.
		if ents[i].v == v {
			hit[i], someHit = true, true
		}
	}
	if someHit {
		if hit[0] {
			w.Agent = nil
		}
		if hit[1] {
			w.Workspace = nil
		}
		if hit[2] {
			w.SecurityAnalyzer = nil
		}
	}
	ms, err := encodeMembers(&w, c)
	if err != nil {
		return nil, err
	}
	// Cache the slots just encoded.
	for i, v := range vals {
		if hit[i] {
			continue
		}
		ents[i] = slotEnc{}
		if v == nil || reflect.TypeOf(v).Kind() != reflect.Pointer {
			continue
		}
		for _, m := range ms {
			if m.key == cachedSlots[i] {
				ents[i] = slotEnc{v: v, val: m.val}
				break
			}
		}
	}
	if !someHit {
		return ms, nil
	}
	// Put the cached members back in their places.
	out := make([]member, 0, len(ms)+len(cachedSlots))
	j := 0
	for _, k := range fieldKeys {
		if j < len(ms) && ms[j].key == k {
			out = append(out, ms[j])
			j++
			continue
		}
		for i, sk := range cachedSlots {
			if sk == k && hit[i] {
				out = append(out, member{k, ents[i].val})
			}
		}
	}
	return out, nil
}
