package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionCmd is "gohands version", the same as --version.
func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of gohands",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(a.stdout, "gohands version %s\n", version())
			return err
		},
	}
}

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
