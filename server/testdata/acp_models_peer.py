"""A scripted ACP server for TestACPModels: it answers initialize and
session/new (with its models) and appends a line to $PEER_LOG each time
it starts; with PEER_AUTH unset it refuses session/new for want of
credentials."""
import json
import os
import sys

if os.environ.get("PEER_LOG"):
    with open(os.environ["PEER_LOG"], "a") as f:
        f.write("start\n")


def reply(i, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": i}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    m = json.loads(line)
    method, i = m.get("method"), m.get("id")
    if method == "initialize":
        reply(i, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [],
                  "agentInfo": {"name": "peer", "version": "2.0"}})
    elif method == "session/new":
        if not os.environ.get("PEER_AUTH"):
            reply(i, error={"code": -32000, "message": "Authentication required"})
            continue
        reply(i, {"sessionId": "s1", "models": {"currentModelId": "fast", "availableModels": [
            {"modelId": "fast", "name": "Fast"}, {"modelId": "big", "name": "Big", "description": "Slow"}]}})
    elif i is not None:
        reply(i, error={"code": -32601, "message": "Method not found"})
