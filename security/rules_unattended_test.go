package security

import (
	"context"
	"slices"
	"testing"

	"github.com/gohands/gohands/event"
)

// TestHomePackagesWorldWritable checks deletes in the home directory,
// system package removal and recursive world-writable permissions are rated
// HIGH (issue 32: they were LOW, so a headless run did them unasked), and
// their harmless neighbours are not.
func TestHomePackagesWorldWritable(t *testing.T) {
	a := &RuleAnalyzer{WorkDir: "/home/dev/app"}
	tests := []struct {
		cmd  string
		want string // the rule expected, "" for not HIGH
	}{
		{"rm -rf ~/x", "rm-in-home"},
		{"rm -rf $HOME/x", "rm-in-home"},
		{"rm -rf ${HOME}/.config", "rm-in-home"},
		{"rm -r -f ~/projects/old/", "rm-in-home"},
		{"cd /tmp && rm -rf ~/Downloads", "rm-in-home"},
		{"rm -rf ~", "rm-recursive-important"},
		{"sudo apt-get remove -y python3", "package-remove"},
		{"apt-get purge nginx", "package-remove"},
		{"sudo apt autoremove", "package-remove"},
		{"sudo dpkg -r libc6", "package-remove"},
		{"dnf erase -y git", "package-remove"},
		{"sudo yum remove httpd", "package-remove"},
		{"rpm -e openssl", "package-remove"},
		{"sudo pacman -Rns firefox", "package-remove"},
		{"apk del curl", "package-remove"},
		{"sudo snap remove code", "package-remove"},
		{"chmod -R 777 .", "chmod-world-writable"},
		{"chmod -R 0777 src", "chmod-world-writable"},
		{"chmod --recursive a+rwx .", "chmod-world-writable"},
		{"chmod -R o+w,u+x build", "chmod-world-writable"},
		{"chmod -R 666 data", "chmod-world-writable"},

		{"rm ~/notes.txt", ""},
		{"rm -rf build", ""},
		{"ls -la ~/x", ""},
		{"echo rm -rf ~/x", ""},
		{"sudo apt-get install -y ripgrep", ""},
		{"apt-get update", ""},
		{"apt list --installed", ""},
		{"dpkg -l", ""},
		{"pip uninstall -y requests", ""},
		{"chmod -R 755 .", ""},
		{"chmod -R u+w .", ""},
		{"chmod 777 run.sh", ""},
		{"chmod -R go-w .", ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		r, err := a.SecurityRisk(ctx, terminalAction(tt.cmd))
		if err != nil {
			t.Fatalf("%q: %v", tt.cmd, err)
		}
		ids := ruleIDs(a, tt.cmd)
		if tt.want == "" {
			if r == event.RiskHigh {
				t.Errorf("%q rated HIGH by %v, want lower", tt.cmd, ids)
			}
			continue
		}
		if r != event.RiskHigh || !slices.Contains(ids, tt.want) {
			t.Errorf("%q rated %s by %v, want HIGH by %s", tt.cmd, r, ids, tt.want)
		}
	}
}
