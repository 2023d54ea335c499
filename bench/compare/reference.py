"""The reference's half of bench/compare: one job per process, run by the
Go command with the reference venv's python. Output: one JSON line."""

import json
import sys
import time
import uuid

from pydantic import SecretStr

from openhands.sdk import LLM, Conversation
from openhands.tools.preset.default import get_default_agent


def agent(model_url):
    llm = LLM(model="openai/bench", base_url=model_url + "/v1", api_key=SecretStr("bench"),
              usage_id="agent", num_retries=0)
    return get_default_agent(llm=llm, cli_mode=True)


def run(model_url, base, workspace, task, max_iter):
    # The default visualizer prints the transcript, as `gohands run` does.
    conv = Conversation(agent=agent(model_url), workspace=workspace, persistence_dir=base,
                        max_iteration_per_run=int(max_iter))
    conv.send_message(task)
    conv.run()
    out = {"id": conv.id.hex, "events": len(conv.state.events)}
    conv.close()
    return out


def replay(conv_dir):
    # Open the stored event log and decode every event.
    from openhands.sdk.conversation.event_store import EventLog
    from openhands.sdk.io import LocalFileStore

    t0 = time.perf_counter()
    events = list(EventLog(LocalFileStore(conv_dir), "events"))
    ms = (time.perf_counter() - t0) * 1000
    return {"ms": ms, "events": len(events)}


def resume(model_url, base, workspace, conv_id, task):
    # The model server notes when the first request arrives; t0 is on the
    # same clock (the wall clock of this machine).
    t0 = time.time_ns()
    conv = Conversation(agent=agent(model_url), workspace=workspace, persistence_dir=base,
                        conversation_id=uuid.UUID(conv_id))
    conv.send_message(task)
    conv.run()
    conv.close()
    return {"t0_unix_ns": t0}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    out = {"run": run, "replay": replay, "resume": resume}[cmd](*args)
    sys.stdout.flush()
    print("\nRESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
