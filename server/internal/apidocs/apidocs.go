// Package apidocs serves the agent server's API documentation pages,
// /docs (Swagger UI) and /redoc (Redoc), with their scripts embedded in
// the binary, so that they work without a network (the reference's pages
// load theirs from a CDN).
//
// The assets are npm's swagger-ui-dist (Apache-2.0) and redoc (MIT), at
// the versions in assets/VERSIONS, gzipped; scripts/vendor-apidocs.sh
// refreshes them, and their licences are in assets/.
package apidocs

import (
	"compress/gzip"
	"embed"
	"html"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the assets are served under.
const Prefix = "/docs/assets/"

// swaggerPage shows SPEC with Swagger UI; no request leaves the server
// (the validator badge, which calls swagger.io, is off).
const swaggerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TITLE</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="PREFIXswagger-ui.css"></head>
<body><noscript><a href="SPEC">SPEC</a></noscript><div id="swagger-ui"></div>
<script src="PREFIXswagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({url: "SPEC", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true,
  oauth2RedirectUrl: location.origin + "/docs/oauth2-redirect",
  presets: [SwaggerUIBundle.presets.apis], layout: "BaseLayout"});</script>
</body></html>`

// redocPage shows SPEC with Redoc.
const redocPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TITLE</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;padding:0}</style></head>
<body><noscript><a href="SPEC">SPEC</a></noscript><redoc spec-url="SPEC"></redoc>
<script type="module" src="PREFIXredoc.standalone.js"></script>
</body></html>`

// RedirectPath is the page Swagger UI's OAuth2 sign-in returns to.
const RedirectPath = "/docs/oauth2-redirect"

// redirectPage hands the authorization server's answer (in the fragment
// for the implicit flow, the query otherwise) back to the Swagger UI
// window that opened it, through the swaggerUIRedirectOauth2 object that
// Swagger UI leaves on window.opener, then closes itself.
const redirectPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>OAuth2 redirect</title></head>
<body><script>
(function () {
  var o = window.opener && window.opener.swaggerUIRedirectOauth2;
  if (!o) { document.body.textContent = "No Swagger UI window is waiting for this sign-in."; return; }
  var raw = /code|token|error/.test(location.hash) ? location.hash.slice(1) : location.search.slice(1);
  var p = {};
  raw.split("&").forEach(function (kv) {
    if (!kv) return;
    var i = kv.indexOf("=");
    var k = decodeURIComponent((i < 0 ? kv : kv.slice(0, i)).replace(/\+/g, " "));
    p[k] = i < 0 ? "" : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, " "));
  });
  var stateOK = p.state === o.state;
  var flow = o.auth && o.auth.schema && (o.auth.schema.get ? o.auth.schema.get("flow") : o.auth.schema.flow);
  if ((flow === "accessCode" || flow === "authorizationCode" || flow === "authorization_code") && !o.auth.code) {
    if (!stateOK) {
      o.errCb({authId: o.auth.name, source: "auth", level: "warning", message: "The state sent back differs from the one sent; the sign-in may be forged."});
    }
    if (p.code) {
      delete o.state;
      o.auth.code = p.code;
      o.callback({auth: o.auth, redirectUrl: o.redirectUrl});
    } else {
      o.errCb({authId: o.auth.name, source: "auth", level: "error",
        message: p.error ? p.error + (p.error_description ? ": " + p.error_description : "") : "No authorization code came back."});
    }
  } else {
    o.callback({auth: o.auth, token: p, isValid: stateOK, redirectUrl: o.redirectUrl});
  }
  window.close();
})();
</script></body></html>`

// OAuth2Redirect serves the page at RedirectPath.
func OAuth2Redirect(w http.ResponseWriter, r *http.Request) { writePage(w, []byte(redirectPage)) }

func page(tmpl, title, spec string) []byte {
	return []byte(strings.NewReplacer("TITLE", html.EscapeString(title), "SPEC", html.EscapeString(spec), "PREFIX", Prefix).Replace(tmpl))
}

// Swagger writes the Swagger UI page of the document at spec.
func Swagger(w http.ResponseWriter, title, spec string) { writePage(w, page(swaggerPage, title, spec)) }

// Redoc writes the Redoc page of the document at spec.
func Redoc(w http.ResponseWriter, title, spec string) { writePage(w, page(redocPage, title, spec)) }

// pagePolicy keeps the pages to the server: Redoc's sidebar shows a logo
// from Redocly's CDN, which the browser is told not to fetch.
const pagePolicy = "default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval'"

func writePage(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Security-Policy", pagePolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// ServeAsset serves the asset r names under Prefix: as stored (gzip) to a
// browser that accepts it, unpacked to one that does not.
func ServeAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if name == "" || strings.Contains(name, "/") || strings.HasSuffix(name, ".gz") {
		http.NotFound(w, r)
		return
	}
	f, err := assets.Open("assets/" + name + ".gz")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("Cache-Control", "public, max-age=86400")
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		if st, err := f.Stat(); err == nil {
			h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
		}
		io.Copy(w, f)
		return
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	io.Copy(w, zr)
}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
