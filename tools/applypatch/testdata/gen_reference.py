"""Record what the reference apply_patch tool (openhands-tools 1.43.1) does.

Not run by the tests: it writes reference_behaviour.json (for each case the
files before, the observation the tool returned and the files after) and
reference_parameters.json (the tool's parameters, descriptions removed),
which the Go tests replay. Regenerate with the reference's Python
(/work/shared/reference/setup.sh --print):

    python gen_reference.py
"""

import json
import os
import tempfile
import types

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.tools.apply_patch import ApplyPatchTool  # noqa: E402
from openhands.tools.apply_patch.definition import ApplyPatchAction  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

MAIN_PY = """import os


def greet(name):
    print("hello", name)


def main():
    greet("world")
    return 0


if __name__ == "__main__":
    main()
"""

CASES = [
    # The format's own example: add, update with an @@ anchor, delete.
    {"name": "add_update_delete",
     "files": {"main.py": MAIN_PY, "old.txt": "obsolete\n"},
     "patch": """*** Begin Patch
*** Add File: docs/hello.txt
+Hello, world!
+Second line
*** Update File: main.py
@@ def greet(name):
-    print("hello", name)
+    print(f"Hello, {name}!")
*** Delete File: old.txt
*** End Patch"""},
    {"name": "update_context_lines",
     "files": {"main.py": MAIN_PY},
     "patch": """*** Begin Patch
*** Update File: main.py
@@
 def main():
-    greet("world")
+    greet("gohands")
+    greet("reference")
     return 0
*** End Patch"""},
    {"name": "update_two_hunks",
     "files": {"main.py": MAIN_PY},
     "patch": """*** Begin Patch
*** Update File: main.py
@@
-import os
+import sys
@@ def main():
     greet("world")
-    return 0
+    return 1
*** End Patch"""},
    {"name": "move",
     "files": {"src/a.txt": "one\ntwo\nthree\n"},
     "patch": """*** Begin Patch
*** Update File: src/a.txt
*** Move to: dst/b.txt
@@
 one
-two
+TWO
 three
*** End Patch"""},
    {"name": "end_of_file",
     "files": {"a.txt": "x\ny\nx\ny\n"},
     "patch": """*** Begin Patch
*** Update File: a.txt
@@
 x
-y
+Y
 
*** End of File
*** End Patch"""},
    {"name": "fuzz_whitespace",
     "files": {"a.txt": "alpha  \nbeta\ngamma\n"},
     "patch": """*** Begin Patch
*** Update File: a.txt
@@
 alpha
-beta
+BETA
 gamma
*** End Patch"""},
    {"name": "absolute_inside",
     "files": {"a.txt": "a\n"},
     "patch": """*** Begin Patch
*** Update File: $DIR/a.txt
@@
-a
+b
*** End Patch"""},
    {"name": "leading_whitespace",
     "files": {},
     "patch": """

*** Begin Patch
*** Add File: a.txt
+x
*** End Patch"""},
    # Bad patches: the model gets a precise error.
    {"name": "err_no_begin", "files": {},
     "patch": "*** Add File: a.txt\n+x\n*** End Patch"},
    {"name": "err_no_end", "files": {},
     "patch": "*** Begin Patch\n*** Add File: a.txt\n+x"},
    {"name": "err_missing_file", "files": {},
     "patch": "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch"},
    {"name": "err_delete_missing", "files": {},
     "patch": "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch"},
    {"name": "err_bad_context", "files": {"a.txt": "a\nb\nc\n"},
     "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n x\n-b\n+B\n*** End Patch"},
    {"name": "err_bad_eof_context", "files": {"a.txt": "a\nb\nc\n"},
     "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-q\n+Q\n*** End of File\n*** End Patch"},
    {"name": "err_add_line", "files": {},
     "patch": "*** Begin Patch\n*** Add File: a.txt\nx\n*** End Patch"},
    {"name": "err_invalid_line", "files": {"a.txt": "a\n"},
     "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n*a\n*** End Patch"},
    {"name": "err_unknown_line", "files": {},
     "patch": "*** Begin Patch\nhello\n*** End Patch"},
    {"name": "err_duplicate", "files": {"a.txt": "a\n"},
     "patch": "*** Begin Patch\n*** Delete File: a.txt\n*** Delete File: a.txt\n*** End Patch"},
    {"name": "err_escape", "files": {},
     "patch": "*** Begin Patch\n*** Delete File: ../outside.txt\n*** End Patch"},
    {"name": "err_absolute_outside", "files": {},
     "patch": "*** Begin Patch\n*** Update File: /etc/hostname\n@@\n-a\n+b\n*** End Patch"},
    {"name": "err_move_escape", "files": {"a.txt": "a\n"},
     "patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../b.txt\n@@\n-a\n+b\n*** End Patch"},
    {"name": "err_empty_section", "files": {"a.txt": "a\n"},
     "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n@@\n-a\n+b\n*** End Patch"},
]


def snapshot(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, encoding="utf-8", newline="") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return dict(sorted(out.items()))


def main():
    results = []
    for case in CASES:
        root = os.path.realpath(tempfile.mkdtemp())
        ws = os.path.join(root, "ws")
        os.makedirs(ws)
        for rel, text in case["files"].items():
            p = os.path.join(ws, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(text)
        cs = types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=ws))
        tool = ApplyPatchTool.create(cs)[0]
        patch = case["patch"].replace("$DIR", ws)
        obs = tool.executor(ApplyPatchAction(patch=patch))
        results.append({
            "name": case["name"],
            "files": case["files"],
            "patch": case["patch"],
            "observation": json.loads(obs.model_dump_json().replace(ws, "$DIR")),
            "after": snapshot(ws),
        })
    with open(os.path.join(HERE, "reference_behaviour.json"), "w") as fh:
        json.dump(results, fh, indent=1, ensure_ascii=False)
        fh.write("\n")

    ws = os.path.realpath(tempfile.mkdtemp())
    cs = types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=ws))
    tool = ApplyPatchTool.create(cs)[0]
    params = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]

    def strip(v):
        if isinstance(v, dict):
            return {k: ({n: strip(s) for n, s in x.items()} if k == "properties" else strip(x))
                    for k, x in v.items() if k != "description"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    with open(os.path.join(HERE, "reference_parameters.json"), "w") as fh:
        json.dump(strip(params), fh, indent=2)
        fh.write("\n")
    # One observation exactly as the reference writes it (kind included).
    obs = tool.executor(ApplyPatchAction(patch="*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"))
    with open(os.path.join(HERE, "reference_observation.json"), "w") as fh:
        fh.write(obs.model_dump_json().replace(ws, "/w") + "\n")
    with open(os.path.join(HERE, "reference_action.json"), "w") as fh:
        fh.write(ApplyPatchAction(patch="*** Begin Patch\n*** End Patch").model_dump_json() + "\n")


main()
