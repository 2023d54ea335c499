"""Record the reference task tool's (openhands-tools 1.43.1) wire form.

Not run by the tests: it writes reference_parameters.json (the task tool's
parameters, descriptions removed), reference_definition.json and
reference_wire.json (an action and observations exactly as the reference
encodes them, and what the model sees of them). Regenerate with the
reference's Python (/work/shared/reference/setup.sh --print):

    python gen_reference.py
"""

import json
import os
import tempfile
import types

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.tools.preset.default import register_builtins_agents  # noqa: E402
from openhands.tools.task import TaskToolSet  # noqa: E402
from openhands.tools.task.definition import TaskAction, TaskObservation  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def strip(v):
    if isinstance(v, dict):
        return {k: ({n: strip(s) for n, s in x.items()} if k == "properties" else strip(x))
                for k, x in v.items() if k != "description"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def main():
    register_builtins_agents(enable_browser=False)
    ws = os.path.realpath(tempfile.mkdtemp())
    cs = types.SimpleNamespace(workspace=types.SimpleNamespace(working_dir=ws))
    tool = TaskToolSet.create(cs)[0]
    params = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
    with open(os.path.join(HERE, "reference_parameters.json"), "w") as fh:
        json.dump(strip(params), fh, indent=2)
        fh.write("\n")
    d = json.loads(tool.model_dump_json())
    d.pop("description", None)
    with open(os.path.join(HERE, "reference_definition.json"), "w") as fh:
        json.dump(d, fh, indent=2)
        fh.write("\n")
    ok = TaskObservation.from_text(text="Created a.txt.", task_id="task_00000001",
                                   subagent="general-purpose", status="completed")
    bad = TaskObservation.from_text(text="boom", task_id="task_00000002",
                                    subagent="bash-runner", status="error", is_error=True)
    wire = {
        # Actions as the reference's event files hold them: without None
        # values (its event store writes exclude_none).
        "action": TaskAction(prompt="p", max_turns=3).model_dump_json(exclude_none=True),
        "action_full": TaskAction(prompt="p", description="d", subagent_type="code-explorer",
                                  resume="task_00000001").model_dump_json(exclude_none=True),
        "observation": ok.model_dump_json(),
        "observation_llm": [c.text for c in ok.to_llm_content],
        "observation_error": bad.model_dump_json(),
        "observation_error_llm": [c.text for c in bad.to_llm_content],
    }
    with open(os.path.join(HERE, "reference_wire.json"), "w") as fh:
        json.dump(wire, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


main()
