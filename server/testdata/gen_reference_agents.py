"""Record the agents the reference (openhands 1.43.1) builds and a client
sends when it starts a conversation: each tool preset's agent
(openhands.tools.preset) and the agent the reference's server builds from
agent_settings (OpenHandsAgentSettings.create_agent), as the JSON of a
StartConversationRequest's agent. Not run by the tests: it writes
reference_agents.json, which TestPresetAgents reads. Regenerate with the
reference's Python (/work/shared/reference/setup.sh --print):

    python gen_reference_agents.py
"""

import json
import os

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from pydantic import SecretStr  # noqa: E402

from openhands.sdk import LLM  # noqa: E402
from openhands.sdk.settings.model import validate_agent_settings  # noqa: E402
from openhands.tools.preset import (  # noqa: E402
    get_default_agent, get_gemini_agent, get_gpt5_agent, get_planning_agent,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def dump(agent):
    return json.loads(agent.model_dump_json(context={"expose_secrets": True}))


def main():
    llm = LLM(model="openai/gpt-4o", usage_id="agent", api_key=SecretStr("sk-test"))
    settings = {"llm": llm.model_dump(mode="json", context={"expose_secrets": True})}
    out = {
        "default": dump(get_default_agent(llm, cli_mode=True)),
        "default_browser": dump(get_default_agent(llm, cli_mode=False)),
        "gpt5": dump(get_gpt5_agent(llm, cli_mode=True)),
        "gemini": dump(get_gemini_agent(llm, cli_mode=True)),
        "planning": dump(get_planning_agent(llm)),
        # What the reference's server makes of {"agent_settings": {"llm": ...}}
        # and of the same with sub-agents.
        "settings": dump(validate_agent_settings(settings).create_agent()),
        "settings_sub_agents": dump(validate_agent_settings(
            dict(settings, enable_sub_agents=True)).create_agent()),
    }
    with open(os.path.join(HERE, "reference_agents.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


main()
