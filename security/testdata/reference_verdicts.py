# Regenerates reference_verdicts.json: the Python reference's own
# deterministic analyzers (Pattern + PolicyRail in an Ensemble) rating every
# command of commands.json (written by `go test -run TestAgainstReference -update`).
# Run with the reference's python from this directory. Not needed by the tests.
import json
from openhands.sdk.event import ActionEvent
from openhands.sdk.llm import MessageToolCall, TextContent
from openhands.sdk.security.defense_in_depth import PatternSecurityAnalyzer, PolicyRailSecurityAnalyzer
from openhands.sdk.security.ensemble import EnsembleSecurityAnalyzer
from openhands.tools.terminal import TerminalAction

ens = EnsembleSecurityAnalyzer(analyzers=[PatternSecurityAnalyzer(), PolicyRailSecurityAnalyzer()])
out = {}
for c in json.load(open("commands.json")):
    args = json.dumps({"command": c, "is_input": False})
    ev = ActionEvent(
        thought=[TextContent(text="")], action=TerminalAction(command=c), tool_name="terminal",
        tool_call_id="t", tool_call=MessageToolCall(id="t", name="terminal", arguments=args, origin="completion"),
        llm_response_id="r")
    out[c] = ens.security_risk(ev).value
json.dump(out, open("reference_verdicts.json", "w"), indent=2, ensure_ascii=False)
