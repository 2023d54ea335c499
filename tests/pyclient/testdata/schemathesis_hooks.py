# Loaded by TestSchemathesis (SCHEMATHESIS_HOOKS). The start request
# documents ACPAgent, whose acp_command is a program the server runs:
# generated ones are replaced by a path that does not exist, so that the
# fuzz never runs a program it made up (the start still goes through the
# server's validation and its failure to spawn).
import schemathesis

MISSING = "/nonexistent/gohands-schemathesis-acp"


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if not isinstance(body, dict):
        return
    agent = body.get("agent")
    if isinstance(agent, dict) and "acp_command" in agent:
        agent["acp_command"] = [MISSING]
