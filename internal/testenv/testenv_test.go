package testenv

import "testing"

func TestProgram(t *testing.T) {
	if p := Program(t, "sh"); p == "" {
		t.Fatal("sh found with an empty path")
	}
}
