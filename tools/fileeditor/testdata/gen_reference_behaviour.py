"""Record what the reference file_editor (openhands-tools 1.43.1) answers.

Not run by the tests: it writes reference_behaviour.json, which
TestReferenceBehaviour replays against our editor. Regenerate with the
reference's Python:

    python gen_reference_behaviour.py > reference_behaviour.json
"""

import base64
import json
import os
import tempfile

from openhands.tools.file_editor.definition import FileEditorAction
from openhands.tools.file_editor.impl import FileEditorExecutor

TWENTY = "".join(f"line {i}\n" for i in range(1, 21))

# Each case: files to make (text, or base64 under "bin"), directories, the
# actions to run in order. "$DIR" stands for the case's directory.
# "phantom": the reference numbers one empty line past a final newline.
CASES = [
    {"name": "view_file", "files": {"a.txt": "héllo\n\twörld 日本\n\nlast\n"},
     "actions": [{"command": "view", "path": "$DIR/a.txt"}], "phantom": True},
    {"name": "view_no_final_newline", "files": {"a.txt": "a\nb"},
     "actions": [{"command": "view", "path": "$DIR/a.txt"}]},
    {"name": "view_range", "files": {"a.txt": "one\ntwo\nthree\nfour\nfive\n"},
     "actions": [
         {"command": "view", "path": "$DIR/a.txt", "view_range": [2, 3]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [4, -1]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [4, 9]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [0, 2]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [6, -1]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [3, 2]},
         {"command": "view", "path": "$DIR/a.txt", "view_range": [1]},
     ]},
    {"name": "view_dir",
     "dirs": ["src/pkg/deep", "docs", ".git/objects", "src/.cache"],
     "files": {"README.md": "x\n", ".env": "x\n", "src/main.go": "x\n", "src/pkg/x.go": "x\n",
               "src/pkg/deep/y.go": "x\n", "src/.hidden": "x\n", "docs/guide.md": "x\n"},
     "actions": [
         {"command": "view", "path": "$DIR"},
         {"command": "view", "path": "$DIR", "view_range": [1, 2]},
         {"command": "str_replace", "path": "$DIR", "old_str": "a", "new_str": "b"},
     ]},
    {"name": "str_replace", "files": {"a.txt": TWENTY}, "phantom": True,
     "actions": [
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "line 10\n", "new_str": "ten\nTEN\n"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "line 1", "new_str": "x"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "line 99", "new_str": "x"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "ten", "new_str": "ten"},
         {"command": "str_replace", "path": "$DIR/a.txt", "new_str": "x"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "ten"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "\n  line 20  \n\n", "new_str": "  twenty  "},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "line 2\n", "new_str": ""},
     ]},
    {"name": "insert", "files": {"a.txt": "a\nb\nc\n"}, "phantom": True,
     "actions": [
         {"command": "insert", "path": "$DIR/a.txt", "insert_line": 1, "new_str": "x\ny"},
         {"command": "insert", "path": "$DIR/a.txt", "insert_line": 9, "new_str": "z"},
         {"command": "insert", "path": "$DIR/a.txt", "new_str": "z"},
         {"command": "insert", "path": "$DIR/a.txt", "insert_line": 0},
     ]},
    {"name": "insert_long", "files": {"a.txt": "l\n" * 30}, "phantom": True,
     "actions": [{"command": "insert", "path": "$DIR/a.txt", "insert_line": 10, "new_str": "new"}]},
    {"name": "create", "files": {"a.txt": "x\n"},
     "actions": [
         {"command": "create", "path": "$DIR/new.py", "file_text": "print('hi')\n"},
         {"command": "create", "path": "$DIR/a.txt", "file_text": "y\n"},
         {"command": "create", "path": "$DIR/b.txt"},
     ]},
    {"name": "undo", "files": {"a.txt": "v0\n"}, "phantom": True,
     "actions": [
         {"command": "undo_edit", "path": "$DIR/a.txt"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "v0", "new_str": "v1"},
         {"command": "str_replace", "path": "$DIR/a.txt", "old_str": "v1", "new_str": "v2"},
         {"command": "undo_edit", "path": "$DIR/a.txt"},
         {"command": "undo_edit", "path": "$DIR/a.txt"},
         {"command": "undo_edit", "path": "$DIR/a.txt"},
     ]},
    {"name": "paths", "files": {"rel.txt": "x\n"},
     "actions": [
         {"command": "view", "path": "rel.txt"},
         {"command": "view", "path": "missing.txt"},
         {"command": "view", "path": "$DIR/missing.txt"},
         {"command": "str_replace", "path": "$DIR/missing.txt", "old_str": "a", "new_str": "b"},
     ]},
    {"name": "binary", "bin": {"prog.bin": base64.b64encode(b"\x7fELF\x02\x01\x01\x00\x00\x00text").decode()},
     "actions": [
         {"command": "view", "path": "$DIR/prog.bin"},
         {"command": "str_replace", "path": "$DIR/prog.bin", "old_str": "text", "new_str": "b"},
     ]},
]


def run_case(case):
    with tempfile.TemporaryDirectory() as d:
        d = os.path.realpath(d)
        for sub in case.get("dirs", []):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        for name, text in case.get("files", {}).items():
            with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)
        for name, b64 in case.get("bin", {}).items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(base64.b64decode(b64))
        ex = FileEditorExecutor(workspace_root=d)
        results = []
        for act in case["actions"]:
            args = {k: (v.replace("$DIR", d) if isinstance(v, str) else v) for k, v in act.items()}
            obs = ex(FileEditorAction(**args))
            text = "".join(c.text for c in obs.content if c.type == "text")
            results.append({"text": text.replace(d, "$DIR"), "is_error": obs.is_error})
        after = {}
        for name in case.get("files", {}):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                with open(p, encoding="utf-8", newline="") as f:
                    after[name] = f.read()
        return dict(case, results=results, after=after)


print(json.dumps([run_case(c) for c in CASES], indent=1, ensure_ascii=False))
