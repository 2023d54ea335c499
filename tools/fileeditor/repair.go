package fileeditor

import (
	"fmt"
	"slices"

	"github.com/gohands/gohands/tool"
)

// aliases are other agents' names for this editor.
var aliases = []string{"str_replace", "str_replace_editor"}

// repair is the file editor's tool.Repairer: a call without a command
// gets the one its arguments imply (old_str: str_replace, insert_line:
// insert, file_text: create, path: view); with no editor argument at all
// it is an error.
func repair(name string, args *tool.Args) (bool, error) {
	if name != Name && !slices.Contains(aliases, name) {
		return false, nil
	}
	if args.Has("command") {
		return true, nil
	}
	for _, p := range [][2]string{{"old_str", "str_replace"}, {"insert_line", "insert"}, {"file_text", "create"}, {"path", "view"}} {
		if args.Has(p[0]) {
			args.SetFirst("command", p[1])
			return true, nil
		}
	}
	if slices.ContainsFunc([]string{"new_str", "view_range"}, args.Has) {
		return true, nil // validation reports the missing command
	}
	return true, fmt.Errorf("cannot infer the command for tool '%s' from arguments %s: give command (view, create, str_replace, insert or undo_edit) and its arguments", Name, args.KeyList())
}
