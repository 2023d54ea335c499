# Loaded by TestSchemathesis (SCHEMATHESIS_HOOKS). The start request
# documents ACPAgent, whose acp_command is a program the server runs:
# generated ones are replaced by a path that does not exist, so that the
# fuzz never runs a program it made up (the start still goes through the
# server's validation and its failure to spawn). The archive routes stream
# whatever directory they are given (a generated "/" is the whole disk):
# their path is replaced by the small directory the test made
# (GOHANDS_ST_ARCHIVE_DIR).
import os

import schemathesis

MISSING = "/nonexistent/gohands-schemathesis-acp"
ARCHIVE_DIR = os.environ["GOHANDS_ST_ARCHIVE_DIR"]


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.path.endswith("/file/archive") and isinstance(case.query, dict) and "path" in case.query:
        case.query["path"] = ARCHIVE_DIR
    body = case.body
    if not isinstance(body, dict):
        return
    agent = body.get("agent")
    if isinstance(agent, dict) and "acp_command" in agent:
        agent["acp_command"] = [MISSING]
