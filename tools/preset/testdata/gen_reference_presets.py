"""Record the reference's agent presets (openhands-tools 1.43.1): for each,
the tool specs, built-in tools, system prompt file and arguments (their
names), and condenser settings. Not run by the tests: it writes
reference_presets.json, which TestPresetsMatchReference compares with ours.
Regenerate with the reference's Python (/work/shared/reference/setup.sh --print):

    python gen_reference_presets.py
"""

import json
import os

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.sdk import LLM  # noqa: E402
from openhands.tools.preset import (  # noqa: E402
    get_default_agent, get_gemini_agent, get_gpt5_agent, get_planning_agent,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def summary(agent):
    d = json.loads(agent.model_dump_json())
    cond = d.get("condenser") or {}
    return {
        "tools": d["tools"],
        "include_default_tools": d["include_default_tools"],
        "system_prompt_filename": d["system_prompt_filename"],
        "system_prompt_kwargs": sorted(d["system_prompt_kwargs"]),
        "cli_mode": d["system_prompt_kwargs"].get("cli_mode"),
        "condenser": {
            "kind": cond.get("kind"),
            "max_size": cond.get("max_size"),
            "keep_first": cond.get("keep_first"),
            "usage_id": (cond.get("llm") or {}).get("usage_id"),
            "model": (cond.get("llm") or {}).get("model"),
        },
    }


def main():
    llm = LLM(model="openai/gpt-4o", usage_id="agent")
    out = {
        "default": summary(get_default_agent(llm, cli_mode=True)),
        "default_browser": summary(get_default_agent(llm, cli_mode=False)),
        "gpt5": summary(get_gpt5_agent(llm, cli_mode=True)),
        "gpt5_browser": summary(get_gpt5_agent(llm, cli_mode=False)),
        "gemini": summary(get_gemini_agent(llm, cli_mode=True)),
        "gemini_browser": summary(get_gemini_agent(llm, cli_mode=False)),
        "planning": summary(get_planning_agent(llm)),
    }
    with open(os.path.join(HERE, "reference_presets.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


main()
