"""The reference 1.58.2's client drives an agent server with an analyzer,
a critic and a sub-agent, and prints what it read, as one JSON line.

The agent has the task tool set and the PassCritic; the conversation gets
the LLMSecurityAnalyzer and ConfirmRisky over the client's own calls. The
scripted model (subAgentModel in subagent158_test.go) makes the agent hand
one task to a sub-agent, then finish.

    python subagent_critic_client.py --server URL --api-key KEY --model URL --workdir DIR
"""

import argparse
import json
import warnings

warnings.filterwarnings("ignore")

from pydantic import SecretStr

from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.critic.impl.pass_critic import PassCritic
from openhands.sdk.security.confirmation_policy import ConfirmRisky
from openhands.sdk.security.llm_analyzer import LLMSecurityAnalyzer
from openhands.sdk.tool import Tool
from openhands.sdk.workspace import RemoteWorkspace
import openhands.tools.task  # registers TaskTool, TaskAction, TaskObservation

p = argparse.ArgumentParser()
for a in ("--server", "--api-key", "--model", "--workdir"):
    p.add_argument(a, required=True)
args = p.parse_args()

llm = LLM(model="openai/gpt-4o", base_url=args.model.rstrip("/") + "/v1",
          api_key=SecretStr("scripted"), usage_id="agent", num_retries=0)
agent = Agent(llm=llm, tools=[Tool(name="task_tool_set")], critic=PassCritic())
ws = RemoteWorkspace(host=args.server, working_dir=args.workdir, api_key=args.api_key)
conv = Conversation(agent=agent, workspace=ws, visualizer=None)
conv.set_security_analyzer(LLMSecurityAnalyzer())
conv.set_confirmation_policy(ConfirmRisky())
conv.send_message("delegate the counting")
conv.run()

out = {"status": str(conv.state.execution_status.value),
       "analyzer": type(conv.state.security_analyzer).__name__,
       "events": []}
for e in conv.state.events:
    d = {"event": type(e).__name__}
    for k in ("action", "observation"):
        v = getattr(e, k, None)
        if v is not None:
            d[k] = type(v).__name__
            if k == "observation":
                d["text"] = " ".join(getattr(c, "text", "") for c in v.content)
    if type(e).__name__ == "ActionEvent":
        d["tool"] = e.tool_name
        d["security_risk"] = str(e.security_risk.value)
        if e.critic_result is not None:
            d["critic_score"] = e.critic_result.score
    out["events"].append(d)
conv.close()
print("RESULT " + json.dumps(out))
