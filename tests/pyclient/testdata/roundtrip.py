"""Times one scripted step with the Python reference's own Conversation.

Each step sends a message and runs the conversation until the scripted
model's text reply finishes it. With --server the conversation is a
RemoteConversation on that agent server (the workspace is a
RemoteWorkspace); without, a LocalConversation in this process. One step
warms up, then --steps are timed. Prints {"ms_per_step": ..., "p50_ms": ...}.

    python roundtrip.py --model URL --workdir DIR [--server URL --api-key KEY] [--steps N]
"""

import argparse
import json
import statistics
import time

from pydantic import SecretStr

from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.tool import Tool
from openhands.sdk.workspace import RemoteWorkspace
from openhands.tools.terminal import TerminalTool


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server")
    ap.add_argument("--api-key")
    ap.add_argument("--model", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    llm = LLM(
        model="openai/gpt-4o",
        base_url=args.model.rstrip("/") + "/v1",
        api_key=SecretStr("scripted"),
        usage_id="agent",
        num_retries=0,
    )
    agent = Agent(llm=llm, tools=[Tool(name=TerminalTool.name)])
    if args.server:
        workspace = RemoteWorkspace(host=args.server, working_dir=args.workdir, api_key=args.api_key)
    else:
        workspace = args.workdir
    conv = Conversation(agent=agent, workspace=workspace, visualizer=None)
    times = []
    for i in range(args.steps + 1):
        start = time.perf_counter()
        conv.send_message("hi")
        conv.run()
        if i > 0:
            times.append(time.perf_counter() - start)
    conv.close()
    print(json.dumps({"ms_per_step": 1000 * sum(times) / len(times), "p50_ms": 1000 * statistics.median(times)}))


if __name__ == "__main__":
    main()
