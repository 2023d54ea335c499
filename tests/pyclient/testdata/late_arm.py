"""Runs client.py's confirm scenario with the reference client arming late.

The reference's RemoteConversation.run() posts /run and only then arms
itself for the post-run full_state snapshot; a snapshot that comes over the
socket before it is armed is ignored, and waiting_for_confirmation is not a
status its REST fallback accepts. On a loaded machine the client's thread
can lose the CPU between the answer to POST /run and the arming, long
enough for a quick run (a command waiting for confirmation) to end and its
snapshot to arrive first. This program makes that interleaving certain:
the answer to each POST /run is held --delay seconds before the client
sees it, after the server has sent it. The reference client is otherwise
unchanged.

    python late_arm.py --server URL --api-key KEY --model URL --workdir DIR --out FILE
"""

import argparse
import json
import sys
import time

import client
from openhands.sdk.conversation.impl import remote_conversation as rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--model", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args()

    send = rc._send_request
    late = []

    def send_late(http, method, path, *a, **kw):
        resp = send(http, method, path, *a, **kw)
        if method == "POST" and path.endswith("/run"):
            time.sleep(args.delay)
            late.append(path)
        return resp

    rc._send_request = send_late
    client.TIMEOUT = args.timeout
    run = client.Run(args)
    run.scenario("confirm", run.confirm)
    run.transcript["late_runs"] = len(late)
    with open(args.out, "w") as f:
        json.dump(run.transcript, f, indent=1, sort_keys=True)
    sys.exit(1 if run.transcript["errors"] else 0)


if __name__ == "__main__":
    main()
