"""A scripted ACP server for TestACPModels and TestSwitchACPModel: it
answers initialize (as $PEER_NAME, else "peer") and session/new (with its
models), appends a line to $PEER_LOG each time it starts and each model it
is asked for (session/set_model: fast and big exist, others are refused),
and answers a prompt with one message, appending the prompt's text to
$PEER_PROMPTS when set; with PEER_AUTH unset it refuses session/new for
want of credentials."""
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
                  "agentInfo": {"name": os.environ.get("PEER_NAME", "peer"), "version": "2.0"}})
    elif method == "session/new":
        if not os.environ.get("PEER_AUTH"):
            reply(i, error={"code": -32000, "message": "Authentication required"})
            continue
        reply(i, {"sessionId": "s1", "models": {"currentModelId": "fast", "availableModels": [
            {"modelId": "fast", "name": "Fast"}, {"modelId": "big", "name": "Big", "description": "Slow"}]}})
    elif method == "session/set_model":
        model = m["params"]["modelId"]
        if os.environ.get("PEER_LOG"):
            with open(os.environ["PEER_LOG"], "a") as f:
                f.write("set_model " + model + "\n")
        if model in ("fast", "big"):
            reply(i, {})
        else:
            reply(i, error={"code": -32602, "message": "Invalid params: no model " + model})
    elif method == "session/prompt":
        if os.environ.get("PEER_PROMPTS"):
            with open(os.environ["PEER_PROMPTS"], "a") as f:
                for block in m["params"].get("prompt", []):
                    f.write(block.get("text", "") + "\n")
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                          "content": {"type": "text", "text": "done"}}}}) + "\n")
        reply(i, {"stopReason": "end_turn"})
    elif i is not None:
        reply(i, error={"code": -32601, "message": "Method not found"})
