package main

import (
	"bytes"
	"strings"
)

// credentialFlags are the flags whose value is a credential.
var credentialFlags = []string{"--api-key", "--secret"}

// blankCredentialArgs zeroes, in place, the credentials among the
// arguments: a credential flag's value (for --secret the part after
// NAME=). args[0] is the program. It reports whether it changed any.
func blankCredentialArgs(args [][]byte) bool {
	changed := false
	blank := func(v []byte, flag string) {
		if flag == "--secret" {
			i := bytes.IndexByte(v, '=')
			if i < 0 {
				return // NAME alone: the value is in the environment
			}
			v = v[i+1:]
		}
		if len(v) > 0 {
			clear(v)
			changed = true
		}
	}
	for i := 1; i < len(args); i++ {
		a := string(args[i])
		if a == "--" {
			break
		}
		for _, flag := range credentialFlags {
			if a == flag && i+1 < len(args) {
				blank(args[i+1], flag)
				i++
				break
			}
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				blank(args[i][len(args[i])-len(v):], flag)
				break
			}
		}
	}
	return changed
}

// cloneArgs returns copies of args that share no memory with them: the
// strings of os.Args point at the process's original command line, which
// scrubArgs overwrites.
func cloneArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.Clone(a)
	}
	return out
}
