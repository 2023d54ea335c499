package pyclient_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to four of the package's tests at once unless
// -test.parallel says otherwise. The default, GOMAXPROCS, is 2 on the
// machines the suite runs on, yet the tests spend their time waiting for
// other processes (the reference's Python, gohands serve, schemathesis):
// run two at a time, the package was the suite's longest at load 8.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}
