//go:build unix

package server_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// BenchmarkArchive streams the tar.gz archive of a tree of incompressible
// 1 MB files over loopback HTTP: MB/s is the archive's throughput (of the
// tree's bytes), peak-RSS-MB the process's high-water mark after it
// (test binary, tree writer and client included) and archive-RSS-growth-MB
// how much the archive raised it. 64 MB by default; GOHANDS_FULL=1
// archives 1 GB, where peak RSS must stay where it is at 64 MB.
func BenchmarkArchive(b *testing.B) {
	size := int64(64 << 20)
	if os.Getenv("GOHANDS_FULL") == "1" {
		size = 1 << 30
	}
	dir := b.TempDir()
	makeTree(b, dir, size, 1<<20)
	ts := newTestServer(b, nil)
	u := ts.http.URL + "/api/file/archive?format=tar.gz&path=" + url.QueryEscape(dir)
	before := maxRSS(b)
	buf := make([]byte, 256<<10)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n < size {
			b.Fatalf("archive: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	b.StopTimer()
	after := maxRSS(b)
	b.ReportMetric(float64(after)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(after-before)/(1<<20), "archive-RSS-growth-MB")
}

// maxRSS is the process's peak resident set, in bytes (Linux counts
// ru_maxrss in KiB).
func maxRSS(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Maxrss << 10
}
