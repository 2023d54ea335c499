package apidocs

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServeAsset(t *testing.T) {
	for _, tc := range []struct {
		name, path, enc string
		status          int
		gz              bool
		ctype           string
	}{
		{"gzip as stored", Prefix + "swagger-ui-bundle.js", "gzip, deflate, br", 200, true, "text/javascript; charset=utf-8"},
		{"unpacked for a client without gzip", Prefix + "swagger-ui.css", "", 200, false, "text/css; charset=utf-8"},
		{"gzip refused with q=0", Prefix + "redoc.standalone.js", "gzip;q=0", 200, false, "text/javascript; charset=utf-8"},
		{"the stored name is not served", Prefix + "swagger-ui.css.gz", "gzip", 404, false, ""},
		{"no traversal", Prefix + "../apidocs.go", "gzip", 404, false, ""},
		{"unknown", Prefix + "nope.js", "gzip", 404, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.enc != "" {
				req.Header.Set("Accept-Encoding", tc.enc)
			}
			rec := httptest.NewRecorder()
			ServeAsset(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			var body io.Reader = rec.Body
			if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != tc.gz {
				t.Fatalf("gzip = %v, want %v", gz, tc.gz)
			} else if gz {
				zr, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			b, err := io.ReadAll(body)
			if err != nil || len(b) < 10000 {
				t.Errorf("asset of %d bytes: %v", len(b), err)
			}
		})
	}
}

func TestPagesReferOnlyToTheServer(t *testing.T) {
	for name, write := range map[string]func(http.ResponseWriter, string, string){"swagger": Swagger, "redoc": Redoc} {
		rec := httptest.NewRecorder()
		write(rec, `A "title" <b>`, "/openapi.json")
		b := rec.Body.String()
		if strings.Contains(b, "http://") || strings.Contains(b, "https://") || strings.Contains(b, "<b>") {
			t.Errorf("%s page refers outside the server or does not escape the title:\n%s", name, b)
		}
		if !strings.Contains(b, Prefix) || !strings.Contains(b, "/openapi.json") {
			t.Errorf("%s page: %s", name, b)
		}
	}
}
