"""Runs an ACPAgent conversation on an agent server with the Python
reference's own client.

The reference's Conversation (a RemoteConversation, since the workspace is a
RemoteWorkspace) creates a conversation whose agent is the reference's
ACPAgent running --acp-command, gives the server the ACP server's
environment as conversation secrets (as the reference's client does for
provider keys), sends --task and runs to the end. It prints JSON: the final
status, the persisted events (kind, source, tool call title and status,
finish message), and any error; exit status 1 on an error.

    python acp_client.py --server URL --api-key KEY --workdir DIR \
        --acp-command 'node /path/to/index.js' --secret NAME=VALUE ... --task TEXT
"""

import argparse
import json
import shlex
import sys
import threading
import traceback

from openhands.sdk import Conversation
from openhands.sdk.agent import ACPAgent
from openhands.sdk.workspace import RemoteWorkspace

TIMEOUT = 240.0


def describe(event):
    d = event.model_dump(mode="json")
    kind = d.get("kind") or type(event).__name__
    out = {"kind": kind, "source": d.get("source")}
    if kind == "ACPToolCallEvent":
        out["title"] = d.get("title")
        out["status"] = d.get("status")
        out["tool_kind"] = d.get("tool_kind")
    elif kind == "ActionEvent":
        out["tool"] = d.get("tool_name")
        out["message"] = (d.get("action") or {}).get("message")
    elif kind == "ConversationErrorEvent":
        out["code"] = d.get("code")
        out["detail"] = d.get("detail")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--acp-command", required=True)
    ap.add_argument("--secret", action="append", default=[])
    ap.add_argument("--task", required=True)
    args = ap.parse_args()

    out = {"errors": []}
    seen = set()
    lock = threading.Lock()

    def on_event(e):
        with lock:
            seen.add(e.id)

    try:
        workspace = RemoteWorkspace(host=args.server, working_dir=args.workdir, api_key=args.api_key)
        agent = ACPAgent(acp_command=shlex.split(args.acp_command), acp_prompt_timeout=TIMEOUT, acp_startup_timeout=TIMEOUT)
        secrets = dict(s.split("=", 1) for s in args.secret)
        conv = Conversation(agent=agent, workspace=workspace, callbacks=[on_event], visualizer=None, secrets=secrets)
        conv.send_message(args.task)
        conv.run(timeout=TIMEOUT)
        out["status"] = str(conv.state.execution_status.value)
        out["agent_kind"] = type(conv.agent).__name__ if hasattr(conv, "agent") else None
        events = list(conv.state.events)
        out["events"] = [describe(e) for e in events]
        with lock:
            out["missed_on_socket"] = [type(e).__name__ for e in events
                                       if e.id not in seen and type(e).__name__ != "SystemPromptEvent"]
        conv.close()
    except Exception as e:
        out["errors"].append(f"{type(e).__name__}: {e}")
        traceback.print_exc()
    print(json.dumps(out, indent=1))
    sys.exit(1 if out["errors"] else 0)


if __name__ == "__main__":
    main()
