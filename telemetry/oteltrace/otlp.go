package oteltrace

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// env returns the traces-specific variable OTEL_EXPORTER_OTLP_TRACES_<name>
// or, unset, the general OTEL_EXPORTER_OTLP_<name>.
func env(name string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
}

// otlpExporter sends spans to an OTLP receiver over gRPC or HTTP.
type otlpExporter struct {
	protocol string // grpc, http/protobuf or http/json
	url      string
	headers  http.Header
	timeout  time.Duration
	gzip     bool
	client   *http.Client
	// perSpan is the size of the last batch's encoding per span: the
	// next one's buffer is made that large at once, not grown by
	// doubling and copying (a batch is 512 spans, some 200 KB).
	perSpan int
	// buf is the last protobuf encoding's buffer, reused by the next
	// batch once the transport has closed every request body that read
	// it (it may close one after Do returns).
	buf    []byte
	mu     sync.Mutex
	bodies []*body
}

// body is a request body that tells when the transport is done with it.
type body struct {
	bytes.Reader
	closed atomic.Bool
}

func (b *body) Close() error {
	b.closed.Store(true)
	return nil
}

// newBody returns a body reading p, tracked until it is closed when p is
// buf's (an uncompressed protobuf encoding).
func (e *otlpExporter) newBody(p []byte) io.ReadCloser {
	if e.protocol == "http/json" || e.gzip {
		return io.NopCloser(bytes.NewReader(p))
	}
	b := new(body)
	b.Reset(p)
	e.mu.Lock()
	e.bodies = append(e.bodies, b)
	e.mu.Unlock()
	return b
}

// buffer returns an empty buffer of capacity n or more: the last one if
// no request still reads it. Export is not called concurrently.
func (e *otlpExporter) buffer(n int) []byte {
	e.mu.Lock()
	reuse := true
	for _, b := range e.bodies {
		reuse = reuse && b.closed.Load()
	}
	e.bodies = e.bodies[:0]
	e.mu.Unlock()
	if !reuse || cap(e.buf) < n {
		e.buf = make([]byte, 0, n)
	}
	return e.buf[:0]
}

const grpcPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// newOTLPExporter configures an exporter from the environment, as the
// OpenTelemetry specification's exporter variables say.
func newOTLPExporter() (*otlpExporter, error) {
	e := &otlpExporter{protocol: env("PROTOCOL"), headers: http.Header{}, timeout: 10 * time.Second}
	if e.protocol == "" {
		e.protocol = "http/protobuf"
	}
	if ms, err := strconv.Atoi(env("TIMEOUT")); err == nil && ms > 0 {
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := strings.ToLower(env("COMPRESSION")); c {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("oteltrace: OTLP compression %q not supported (gzip or none)", c)
	}
	// The general headers, then the traces-specific ones over them.
	for _, v := range []string{os.Getenv("OTEL_EXPORTER_OTLP_HEADERS"), os.Getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")} {
		for kv := range strings.SplitSeq(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			if u, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
				val = u
			}
			e.headers.Set(strings.TrimSpace(k), strings.TrimSpace(val))
		}
	}
	tlsConf, err := tlsConfig()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	specific := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	general := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	switch e.protocol {
	case "http/protobuf", "http/json":
		switch {
		case specific != "":
			e.url = specific // used as is
		case general != "":
			e.url = strings.TrimSuffix(general, "/") + "/v1/traces"
		default:
			e.url = "http://localhost:4318/v1/traces"
		}
	case "grpc":
		endpoint := specific
		if endpoint == "" {
			endpoint = general
		}
		if endpoint == "" {
			endpoint = "http://localhost:4317"
		}
		// host:port alone is TLS unless OTEL_EXPORTER_OTLP_INSECURE says.
		if !strings.Contains(endpoint, "://") {
			scheme := "https://"
			if strings.EqualFold(env("INSECURE"), "true") {
				scheme = "http://"
			}
			endpoint = scheme + endpoint
		}
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, fmt.Errorf("oteltrace: OTLP endpoint %q: %w", endpoint, err)
		}
		e.url = u.Scheme + "://" + u.Host + grpcPath
		// gRPC is HTTP/2 only: with TLS by ALPN, in clear text with
		// prior knowledge (h2c), as gRPC servers expect.
		var p http.Protocols
		if u.Scheme == "http" {
			p.SetUnencryptedHTTP2(true)
		} else {
			p.SetHTTP2(true)
		}
		tr.Protocols = &p
		tr.ForceAttemptHTTP2 = true
	default:
		return nil, fmt.Errorf("oteltrace: OTLP protocol %q not supported (grpc, http/protobuf or http/json)", e.protocol)
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("oteltrace: OTLP endpoint %q is not an http(s) URL", e.url)
	}
	e.client = &http.Client{Transport: tr}
	return e, nil
}

// tlsConfig reads the CA and client certificate files the environment
// names; nil when it names none.
func tlsConfig() (*tls.Config, error) {
	ca, cert, key := env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY")
	if ca == "" && cert == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("oteltrace: OTLP certificate: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("oteltrace: OTLP certificate %s holds no PEM certificate", ca)
		}
	}
	if cert != "" {
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("oteltrace: OTLP client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}

func userAgent() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "gohands-otlp/" + v
}

// Export sends one batch, retrying what the protocol calls transient
// (HTTP 429, 502, 503, 504; gRPC UNAVAILABLE, RESOURCE_EXHAUSTED,
// ABORTED, DEADLINE_EXCEEDED) with backoff until the timeout.
func (e *otlpExporter) Export(ctx context.Context, r *Resource, spans []*SpanData) error {
	var body []byte
	if e.protocol == "http/json" {
		var err error
		if body, err = marshalJSON(r, spans); err != nil {
			return err
		}
	} else {
		// Five bytes before the message for gRPC's frame, filled below.
		buf := e.buffer(5 + cmp.Or(e.perSpan, 512)*len(spans)*9/8 + 256)
		e.buf = marshalProto(buf[:5], r, spans)
		body = e.buf[5:]
		if len(spans) > 0 {
			e.perSpan = len(body) / len(spans)
		}
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
	}
	if e.protocol == "grpc" {
		// The length-prefixed message: a compressed flag and a
		// big-endian length, in place before an uncompressed one.
		if e.gzip {
			framed := make([]byte, 5, 5+len(body))
			framed[0] = 1
			binary.BigEndian.PutUint32(framed[1:], uint32(len(body)))
			body = append(framed, body...)
		} else {
			binary.BigEndian.PutUint32(e.buf[1:5], uint32(len(body)))
			body = e.buf // the five bytes left before the message
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		retry, after, err := e.send(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after <= 0 {
			after = wait
			wait = min(2*wait, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (giving up: %v)", err, ctx.Err())
		case <-time.After(after):
		}
	}
}

// send makes one attempt; it says whether a failure may be retried, and
// after how long if the receiver said.
func (e *otlpExporter) send(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, "POST", e.url, e.newBody(body))
	if err != nil {
		return false, 0, err
	}
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return e.newBody(body), nil }
	maps.Copy(req.Header, e.headers)
	req.Header.Set("User-Agent", userAgent())
	switch e.protocol {
	case "grpc":
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if e.gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
	case "http/json":
		req.Header.Set("Content-Type", "application/json")
	default:
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	if e.gzip && e.protocol != "grpc" {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A refused connection or a reset is worth another try.
		return ctx.Err() == nil, 0, fmt.Errorf("oteltrace: OTLP export to %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	io.Copy(io.Discard, resp.Body) // a gRPC status comes in the trailers, after the body
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil {
			after = time.Duration(secs) * time.Second
		}
	}
	if e.protocol == "grpc" {
		return grpcStatus(resp, after)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return false, 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		retry = true
	}
	return retry, after, fmt.Errorf("oteltrace: OTLP export to %s: %s: %s", e.url, resp.Status, bytes.TrimSpace(msg))
}

// grpcStatus reads a gRPC call's status from the trailers (or the
// headers, for a trailers-only answer).
func grpcStatus(resp *http.Response, after time.Duration) (bool, time.Duration, error) {
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode == http.StatusServiceUnavailable, after, fmt.Errorf("oteltrace: OTLP gRPC export: HTTP %s", resp.Status)
	}
	code, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if code == "" {
		code, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if code == "" {
		return false, 0, errors.New("oteltrace: OTLP gRPC export: no grpc-status in the answer")
	}
	if code == "0" {
		return false, 0, nil
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	// UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED.
	retry := code == "14" || code == "8" || code == "10" || code == "4"
	return retry, after, fmt.Errorf("oteltrace: OTLP gRPC export: status %s: %s", code, msg)
}

func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// resourceFromEnv is the resource of gohands' spans: the SDK's
// telemetry.sdk.* attributes, service.name (OTEL_SERVICE_NAME, else
// service, else "gohands"), and OTEL_RESOURCE_ATTRIBUTES (k=v,...,
// percent-encoded values), which win over the rest but service.name.
func resourceFromEnv(service string) *Resource {
	attrs := []Attr{
		{Key: "telemetry.sdk.name", Str: "gohands"},
		{Key: "telemetry.sdk.language", Str: "go"},
		{Key: "service.name", Str: cmp.Or(service, "gohands")},
	}
	set := func(k, v string) {
		for i := range attrs {
			if attrs[i].Key == k {
				attrs[i].Str = v
				return
			}
		}
		attrs = append(attrs, Attr{Key: k, Str: v})
	}
	for kv := range strings.SplitSeq(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		if u, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = u
		}
		set(strings.TrimSpace(k), v)
	}
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		set("service.name", n)
	}
	return &Resource{Attrs: attrs, Scope: "github.com/gohands/gohands"}
}
