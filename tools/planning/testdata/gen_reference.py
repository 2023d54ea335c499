"""Record what the reference planning_file_editor (openhands-tools 1.43.1)
does. Not run by the tests: it writes reference_behaviour.json (the PLAN.md
the tool starts with, then each action and the observation it returned, and
the files after) and reference_parameters.json / reference_definition.json.
Regenerate with the reference's Python (/work/shared/reference/setup.sh --print):

    python gen_reference.py
"""

import json
import os
import tempfile
import types

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.tools.planning_file_editor import PlanningFileEditorTool  # noqa: E402
from openhands.tools.planning_file_editor.definition import PlanningFileEditorAction  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

ACTIONS = [
    {"command": "view", "path": "$PLAN"},
    {"command": "view", "path": "$DIR/src.py"},
    {"command": "str_replace", "path": "$PLAN", "old_str": "# 1. OBJECTIVE\n", "new_str": "# 1. OBJECTIVE\nShip it.\n"},
    {"command": "insert", "path": "$PLAN", "insert_line": 0, "new_str": "Plan"},
    {"command": "undo_edit", "path": "$PLAN"},
    {"command": "create", "path": "$DIR/other.md", "file_text": "x"},
    {"command": "str_replace", "path": "$DIR/src.py", "old_str": "a", "new_str": "b"},
]


def snapshot(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, encoding="utf-8") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return dict(sorted(out.items()))


def main():
    ws = os.path.realpath(tempfile.mkdtemp())
    with open(os.path.join(ws, "src.py"), "w") as fh:
        fh.write("a = 1\n")
    cs = types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=ws))
    tool = PlanningFileEditorTool.create(cs)[0]
    plan = os.path.join(ws, ".agents_tmp", "PLAN.md")
    initial = snapshot(ws)
    steps = []
    for args in ACTIONS:
        args = json.loads(json.dumps(args).replace("$PLAN", plan).replace("$DIR", ws))
        obs = tool.executor(PlanningFileEditorAction(**args))
        steps.append({"args": json.loads(json.dumps(args).replace(ws, "$DIR")),
                      "observation": json.loads(obs.model_dump_json().replace(ws, "$DIR"))})
    out = {"initial": initial, "steps": steps, "after": snapshot(ws)}
    # A legacy PLAN.md at the workspace root is used where it is.
    legacy = os.path.realpath(tempfile.mkdtemp())
    with open(os.path.join(legacy, "PLAN.md"), "w") as fh:
        fh.write("mine\n")
    t2 = PlanningFileEditorTool.create(types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=legacy)))[0]
    o2 = t2.executor(PlanningFileEditorAction(command="create", path=os.path.join(legacy, ".agents_tmp", "PLAN.md"), file_text="x"))
    out["legacy"] = json.loads(o2.model_dump_json().replace(legacy, "$DIR"))
    out["legacy_after"] = snapshot(legacy)
    with open(os.path.join(HERE, "reference_behaviour.json"), "w") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")

    def strip(v):
        if isinstance(v, dict):
            return {k: ({n: strip(s) for n, s in x.items()} if k == "properties" else strip(x))
                    for k, x in v.items() if k != "description"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    params = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
    with open(os.path.join(HERE, "reference_parameters.json"), "w") as fh:
        json.dump(strip(params), fh, indent=2)
        fh.write("\n")
    d = json.loads(tool.model_dump_json())
    d.pop("description", None)
    with open(os.path.join(HERE, "reference_definition.json"), "w") as fh:
        json.dump(d, fh, indent=2)
        fh.write("\n")


main()
