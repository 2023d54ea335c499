package llm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// writerBody is a sizedBody that counts the bytes it wrote itself. It
// is an io.ReadCloser, as llm/openai's body is: net/http would hide any
// other reader's Len behind io.NopCloser.
type writerBody struct {
	*strings.Reader
	wrote int64
}

func (b *writerBody) Close() error { return nil }

func (b *writerBody) WriteTo(w io.Writer) (int64, error) {
	n, err := b.Reader.WriteTo(w)
	b.wrote += n
	return n, err
}

// TestBodyConn checks that the default client's connections let a body
// of known length write itself, and that the server gets every byte either
// way.
func TestBodyConn(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	want := strings.Repeat("0123456789abcdef", 20000) // more than a buffer or two
	send := func(body io.Reader, length int64) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		resp, err := defaultHTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if string(got) != want {
			t.Fatalf("server got %d bytes, want %d equal to the body", len(got), len(want))
		}
	}
	b := &writerBody{Reader: strings.NewReader(want)}
	send(b, int64(len(want)))
	// Only what net/http's 4 KB buffer took first is not written by WriteTo.
	if b.wrote < int64(len(want))-4096 {
		t.Errorf("sized body: WriteTo wrote %d of %d bytes", b.wrote, len(want))
	}
	send(&writerBody{Reader: strings.NewReader(want)}, -1)                // chunked
	send(io.MultiReader(bytes.NewReader([]byte(want))), int64(len(want))) // no Len: copied
}
