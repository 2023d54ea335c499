package wire

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStrMatchesEncodingJSON checks Str against encoding/json on strings
// built from the pieces that take the scanner's other paths: escapes of
// every kind, surrogate pairs (whole and lone), multi-byte and invalid
// UTF-8, and runs long enough for the word-at-a-time loops.
func TestStrMatchesEncodingJSON(t *testing.T) {
	pieces := []string{
		"a", "plain text ", strings.Repeat("x", 17), `\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`,
		`\u0041`, `\u00e9`, `\u20AC`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`,
		"é", "€", "😀", "\xff", "\xe2\x82", "\xed\xa0\x80", "\x7f",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		in := b.String()
		var want string
		wantErr := json.Unmarshal([]byte(in), &want)
		d := &Decoder{Data: []byte(in + ",")}
		got, err := d.Str()
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%d: Str(%q) error %v, encoding/json %v", n, in, err, wantErr)
		}
		if err != nil {
			continue
		}
		if got != want {
			t.Fatalf("%d: Str(%q) = %q, want %q", n, in, got, want)
		}
		if d.Pos != len(in) {
			t.Fatalf("%d: Str(%q) stopped at %d, want %d", n, in, d.Pos, len(in))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%d: Str(%q) = %q, not UTF-8", n, in, got)
		}
	}
}

// TestStrErrors checks that a bad or cut string is an error wherever the
// damage is, and that Skip agrees.
func TestStrErrors(t *testing.T) {
	for _, in := range []string{
		`"abc`, `"abc\`, `"abc\n`, `"a\x"`, `"a\u12"`, `"a\u12g4"`, "\"a\x01\"", "\"a\\n\x1f\"",
		`"` + strings.Repeat(`line\n`, 40), `"` + strings.Repeat("long plain text", 20),
	} {
		d := &Decoder{Data: []byte(in)}
		if s, err := d.Str(); err == nil {
			t.Errorf("Str(%q) = %q, want an error", in, s)
		}
		d = &Decoder{Data: []byte(in)}
		if err := d.SkipValue(); err == nil {
			t.Errorf("SkipValue(%q) succeeded", in)
		}
	}
}

// terminalOutput is JSON string text shaped like a terminal observation's
// output: lines of ~75 bytes, so an escape every line.
var terminalOutput = `"` + strings.Repeat(`src/pkg/file.go:123: some matching line of source code with pattern in it\n`, 60) + `"`

func BenchmarkStr(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"plain", `"` + strings.Repeat("You are a careful software engineer. ", 100) + `"`},
		{"lines", terminalOutput},
		{"arguments", `"{\"command\": \"grep -rn pattern1 src/ | head -50\", \"security_risk\": \"LOW\", \"summary\": \"search the sources\"}"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			data := []byte(c.text)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d := Decoder{Data: data}
				if _, err := d.Str(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSkipString(b *testing.B) {
	data := []byte(terminalOutput)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d := Decoder{Data: data}
		if err := d.SkipValue(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScanValidObject checks ScanValidObject against ScanObject on
// well-formed objects whose values take every path (strings ending in
// escaped quotes and backslashes, nesting, numbers, literals, white
// space), and that it never panics on malformed ones.
func TestScanValidObject(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	strs := []string{`""`, `"a"`, `"\\"`, `"\\\\"`, `"a\"b"`, `"\\\""`, `"x\\\\\"y\\"`, `"{[,]}:"`, `"\u0022"`, `"é"`, `"` + strings.Repeat(`line\n`, 9) + `"`}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := rng.IntN(8); {
		case n < 3 || depth > 3:
			return strs[rng.IntN(len(strs))]
		case n == 3:
			return []string{"0", "-1.5e+3", "42", "true", "false", "null"}[rng.IntN(6)]
		case n == 4:
			var b strings.Builder
			b.WriteString("[ ")
			for k := range rng.IntN(4) {
				if k > 0 {
					b.WriteString(" ,\n")
				}
				b.WriteString(value(depth + 1))
			}
			b.WriteString("]")
			return b.String()
		default:
			var b strings.Builder
			b.WriteString("{")
			for k := range rng.IntN(4) {
				if k > 0 {
					b.WriteString(",")
				}
				b.WriteString(strs[rng.IntN(len(strs))] + " :\t" + value(depth+1))
			}
			b.WriteString("}")
			return b.String()
		}
	}
	type kv struct{ k, v string }
	scan := func(f func([]byte, func(k, v []byte) error) error, data []byte) ([]kv, error) {
		var out []kv
		err := f(data, func(k, v []byte) error {
			out = append(out, kv{string(k), string(v)})
			return nil
		})
		return out, err
	}
	for n := range 5000 {
		var b strings.Builder
		b.WriteString(" {")
		for k := range rng.IntN(6) {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"k%d": %s`, k, value(0))
		}
		b.WriteString("}\n")
		data := []byte(b.String())
		if !json.Valid(data) {
			t.Fatalf("%d: the test built invalid JSON: %s", n, data)
		}
		want, err := scan(ScanObject, data)
		if err != nil {
			t.Fatalf("%d: ScanObject(%s): %v", n, data, err)
		}
		got, err := scan(ScanValidObject, data)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%d: ScanValidObject(%s) = %q, %v; want %q", n, data, got, err, want)
		}
		for range 3 { // malformed: cut and altered, must not panic
			bad := slices.Clone(data[:rng.IntN(len(data))])
			if len(bad) > 0 {
				bad[rng.IntN(len(bad))] = `"\{}[],:`[rng.IntN(8)]
			}
			scan(ScanValidObject, bad)
		}
	}
}
