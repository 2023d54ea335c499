"""Record the reference's invoke_skill (openhands-sdk 1.43.1): its
parameters (descriptions removed), definition, an action and observations
as encoded, and how skill content with inline commands renders. Not run by
the tests: it writes reference.json, which the Go tests compare with.
Regenerate with the reference's Python (/work/shared/reference/setup.sh --print):

    python gen_reference.py
"""

import json
import os
import tempfile
import types

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.sdk.skills import Skill  # noqa: E402
from openhands.sdk.skills.execute import render_content_with_commands  # noqa: E402
from openhands.sdk.tool.builtins.invoke_skill import (  # noqa: E402
    InvokeSkillAction, InvokeSkillExecutor, InvokeSkillTool,
)

HERE = os.path.dirname(os.path.abspath(__file__))

RENDER = [
    "Branch: !`echo main`.",
    "Code `!not run` and `echo x` stay.",
    "Escaped \\!`echo no` stays literal.",
    "```\n!`echo fenced`\n```\nafter !`echo yes`",
    "unclosed ```\n!`echo never`",
    "fail: !`echo oops >&2; exit 3`",
    "two !`printf a` and !`printf b`",
    "empty !`` here",
]


def strip(v):
    if isinstance(v, dict):
        return {k: ({n: strip(s) for n, s in x.items()} if k == "properties" else strip(x))
                for k, x in v.items() if k != "description"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def main():
    ws = os.path.realpath(tempfile.mkdtemp())
    tool = InvokeSkillTool.create()[0]
    out = {
        "parameters": strip(tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]),
        "definition": {k: v for k, v in json.loads(tool.model_dump_json()).items() if k != "description"},
        "action": InvokeSkillAction(name="deploy").model_dump_json(),
        "render": [[c, render_content_with_commands(c, working_dir=ws)] for c in RENDER],
    }
    skill_dir = os.path.join(ws, ".agents", "skills", "deploy")
    os.makedirs(skill_dir)
    src = os.path.join(skill_dir, "SKILL.md")
    with open(src, "w") as fh:
        fh.write("---\nname: deploy\ndescription: d\n---\nRun ./deploy.sh in !`pwd`.\n")
    skills = [
        Skill(name="deploy", content="Run ./deploy.sh in !`pwd`.", source=src,
              is_agentskills_format=True, description="d"),
        Skill(name="hidden", content="x", is_agentskills_format=True,
              disable_model_invocation=True, description="h"),
    ]
    state = types.SimpleNamespace(
        agent=types.SimpleNamespace(agent_context=types.SimpleNamespace(skills=skills)),
        workspace=types.SimpleNamespace(working_dir=ws), invoked_skills=[])
    conv = types.SimpleNamespace(state=state)
    ex = InvokeSkillExecutor()
    out["invoke"] = {n: json.loads(ex(InvokeSkillAction(name=n), conv).model_dump_json().replace(ws, "$DIR"))
                     for n in ["deploy", " deploy ", "hidden", "nope"]}
    out["invoked_skills"] = state.invoked_skills
    with open(os.path.join(HERE, "reference.json"), "w") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


main()
