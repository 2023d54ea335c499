"""Record what the reference gemini-style file tools (openhands-tools 1.43.1)
do: read_file, write_file, edit and list_directory.

Not run by the tests: it writes reference_behaviour.json (for each case the
files before, each action with the observation the tool returned, and the
files after), reference_parameters.<tool>.json (each tool's parameters,
descriptions removed) and reference_<kind>.json (one action and observation
of each tool exactly as the reference encodes them), which the Go tests
replay. Regenerate with the reference's Python
(/work/shared/reference/setup.sh --print):

    python gen_reference.py
"""

import json
import os
import tempfile
import types

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.tools.gemini import (  # noqa: E402
    EditAction, EditTool, ListDirectoryAction, ListDirectoryTool,
    ReadFileAction, ReadFileTool, WriteFileAction, WriteFileTool,
)

HERE = os.path.dirname(os.path.abspath(__file__))
MTIME = 1700000000.25  # every file and directory gets this modification time

TOOLS = {"read_file": (ReadFileTool, ReadFileAction),
         "write_file": (WriteFileTool, WriteFileAction),
         "edit": (EditTool, EditAction),
         "list_directory": (ListDirectoryTool, ListDirectoryAction)}

LINES = "".join(f"line {i}\n" for i in range(1, 1201))

CASES = [
    {"name": "read", "files": {"a.txt": "alpha\nbeta\ngamma"},
     "actions": [
         ["read_file", {"file_path": "a.txt"}],
         ["read_file", {"file_path": "$DIR/a.txt"}],
         ["read_file", {"file_path": "a.txt", "offset": 1}],
         ["read_file", {"file_path": "a.txt", "offset": 1, "limit": 1}],
         ["read_file", {"file_path": "a.txt", "offset": 3}],
         ["read_file", {"file_path": "missing.txt"}],
         ["read_file", {"file_path": "."}],
         ["read_file", {"file_path": "./sub/../a.txt"}],
     ]},
    {"name": "read_long", "files": {"long.txt": LINES},
     "actions": [
         ["read_file", {"file_path": "long.txt"}],
         ["read_file", {"file_path": "long.txt", "offset": 1000}],
         ["read_file", {"file_path": "long.txt", "offset": 10, "limit": 5}],
     ]},
    {"name": "read_special", "files": {"crlf.txt": "a\r\nb\r\n", "empty.txt": "", "uni.txt": "héllo 日本\n"},
     "bin": {"bad.bin": [0xff, 0xfe, 0x41, 0x0a]},
     "actions": [
         ["read_file", {"file_path": "crlf.txt"}],
         ["read_file", {"file_path": "empty.txt"}],
         ["read_file", {"file_path": "uni.txt"}],
         ["read_file", {"file_path": "bad.bin"}],
     ]},
    {"name": "write", "files": {"a.txt": "old\n"},
     "actions": [
         ["write_file", {"file_path": "new/dir/b.txt", "content": "hello\n"}],
         ["write_file", {"file_path": "a.txt", "content": "new\n"}],
         ["write_file", {"file_path": "$DIR/c.txt", "content": ""}],
         ["write_file", {"file_path": "new", "content": "x"}],
     ]},
    {"name": "edit", "files": {"a.txt": "foo bar foo\nbaz\n"},
     "actions": [
         ["edit", {"file_path": "a.txt", "old_string": "baz", "new_string": "BAZ"}],
         ["edit", {"file_path": "a.txt", "old_string": "foo", "new_string": "FOO"}],
         ["edit", {"file_path": "a.txt", "old_string": "foo", "new_string": "FOO", "expected_replacements": 2}],
         ["edit", {"file_path": "a.txt", "old_string": "nothere", "new_string": "x"}],
         ["edit", {"file_path": "a.txt", "old_string": "BAZ", "new_string": "BAZ"}],
         ["edit", {"file_path": "a.txt", "old_string": "FOO", "new_string": "x", "expected_replacements": 0}],
         ["edit", {"file_path": "made/new.txt", "old_string": "", "new_string": "created\n"}],
         ["edit", {"file_path": "a.txt", "old_string": "", "new_string": "x"}],
         ["edit", {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}],
         ["edit", {"file_path": "made", "old_string": "a", "new_string": "b"}],
         ["edit", {"file_path": "$DIR/a.txt", "old_string": "BAZ", "new_string": "baz"}],
     ]},
    {"name": "list", "files": {"b.txt": "bb", "a.txt": "a", ".hidden": "h", "sub/x.go": "package x\n", "sub/deep/y.go": "y", "sub/deep/deeper/z.go": "z"},
     "actions": [
         ["list_directory", {}],
         ["list_directory", {"dir_path": "sub"}],
         ["list_directory", {"dir_path": "$DIR/sub", "recursive": True}],
         ["list_directory", {"dir_path": "missing"}],
         ["list_directory", {"dir_path": "a.txt"}],
     ]},
]


def snapshot(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read().decode("utf-8", "replace")
    return dict(sorted(out.items()))


def touch_all(root):
    for dirpath, dirs, files in os.walk(root, topdown=False):
        for n in files + dirs:
            os.utime(os.path.join(dirpath, n), (MTIME, MTIME))


def make_tool(name, ws):
    cs = types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=ws))
    return TOOLS[name][0].create(cs)[0]


def main():
    results = []
    samples = {}
    for case in CASES:
        root = os.path.realpath(tempfile.mkdtemp())
        ws = os.path.join(root, "ws")
        os.makedirs(ws)
        for rel, text in case["files"].items():
            p = os.path.join(ws, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        for rel, data in case.get("bin", {}).items():
            with open(os.path.join(ws, rel), "wb") as fh:
                fh.write(bytes(data))
        touch_all(ws)
        steps = []
        for name, args in case["actions"]:
            tool = make_tool(name, ws)
            args = json.loads(json.dumps(args).replace("$DIR", ws))
            action = TOOLS[name][1](**args)
            obs = tool.executor(action)
            raw = obs.model_dump_json()
            samples.setdefault(type(obs).__name__, raw.replace(ws, "/w"))
            samples.setdefault(type(action).__name__, action.model_dump_json())
            steps.append({"tool": name, "args": json.loads(json.dumps(args).replace(ws, "$DIR")),
                          "observation": json.loads(raw.replace(ws, "$DIR"))})
            touch_all(ws)
        results.append({"name": case["name"], "files": case["files"], "bin": case.get("bin", {}),
                        "steps": steps, "after": snapshot(ws)})
    with open(os.path.join(HERE, "reference_behaviour.json"), "w") as fh:
        json.dump(results, fh, indent=1, ensure_ascii=False)
        fh.write("\n")

    def strip(v):
        if isinstance(v, dict):
            return {k: ({n: strip(s) for n, s in x.items()} if k == "properties" else strip(x))
                    for k, x in v.items() if k != "description"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    ws = os.path.realpath(tempfile.mkdtemp())
    for name in TOOLS:
        tool = make_tool(name, ws)
        params = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
        with open(os.path.join(HERE, f"reference_parameters.{name}.json"), "w") as fh:
            json.dump(strip(params), fh, indent=2)
            fh.write("\n")
        with open(os.path.join(HERE, f"reference_definition.{name}.json"), "w") as fh:
            d = json.loads(tool.model_dump_json())
            d.pop("description", None)
            json.dump(json.loads(json.dumps(d).replace(ws, "/w")), fh, indent=2)
            fh.write("\n")
    with open(os.path.join(HERE, "reference_samples.json"), "w") as fh:
        json.dump(samples, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


main()
