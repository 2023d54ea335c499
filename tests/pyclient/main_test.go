package pyclient_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain runs up to four of the package's tests at once unless
// -test.parallel says otherwise. The default, GOMAXPROCS, is 2 on the
// machines the suite runs on, yet the tests spend their time waiting for
// other processes (the reference's Python, gohands serve, schemathesis):
// run two at a time, the package was the suite's longest at load 8.
// It stops the servers the tests share (shared_test.go) when they are
// done.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	code := m.Run()
	if err := shared.run(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the shared servers: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
