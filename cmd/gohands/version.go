package main

import "strings"

import "runtime/debug"

// version is the module version gohands was built from ("(devel)" for a
// build in a work tree), with the VCS revision when known.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var v strings.Builder
	v.WriteString(bi.Main.Version)
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v.WriteString(" " + s.Value[:12])
		}
	}
	return v.String()
}
