# Generator of stuck_reference.json: run with the Python reference SDK
# (openhands-sdk 1.43.1), `python stuck_reference.py > stuck_reference.json`.
# Not needed by the tests, which read the JSON.
# Runs the reference StuckDetector over scripted scenarios and writes the
# events and its verdicts as a fixture for the Go stuck detector tests.
import json, itertools, sys
from openhands.sdk.event import ActionEvent, ObservationEvent, AgentErrorEvent, MessageEvent, PauseEvent
from openhands.sdk.event.condenser import CondensationSummaryEvent
from openhands.sdk.llm import Message, TextContent, MessageToolCall
from openhands.sdk.conversation.stuck_detector import StuckDetector
from openhands.tools.terminal import TerminalAction, TerminalObservation

seq = itertools.count(1)
def cid(): return f"call_{next(seq)}"

def act(cmd, thought="try it"):
    c = cid()
    return ActionEvent(thought=[TextContent(text=thought)], action=TerminalAction(command=cmd), tool_name="terminal",
        tool_call_id=c, tool_call=MessageToolCall(id=c, name="terminal", arguments=json.dumps({"command": cmd}), origin="completion"),
        llm_response_id="resp_" + c)

def bad(args):
    c = cid()
    return ActionEvent(thought=[TextContent(text="try it")], action=None, tool_name="terminal", tool_call_id=c,
        tool_call=MessageToolCall(id=c, name="terminal", arguments=args, origin="completion"), llm_response_id="resp_" + c)

def obs(out):
    return ObservationEvent(observation=TerminalObservation.from_text(text=out, command="x", exit_code=0), tool_name="terminal", tool_call_id=cid(), action_id="a")

def err(msg): return AgentErrorEvent(error=msg, tool_name="terminal", tool_call_id=cid())
def msg(src, text): return MessageEvent(source=src, llm_message=Message(role="assistant" if src == "agent" else "user", content=[TextContent(text=text)]))

def build(script):
    out = []
    for f in script.split():
        op, _, arg = f.partition(":")
        out.append({
            "A": lambda: act(arg), "T": lambda: act(arg, "a new idea"), "B": lambda: bad(arg),
            "O": lambda: obs(arg), "E": lambda: err(arg), "M": lambda: msg("agent", "still thinking"),
            "U": lambda: msg("user", "go on"), "N": lambda: msg("environment", "note"),
            "S": lambda: CondensationSummaryEvent(summary="s"), "P": lambda: PauseEvent(),
        }[op]())
    return out

class FakeState:
    def __init__(self, events): self.events = events
    def active_branch(self, limit=None): return self.events[-limit:] if limit else self.events

def rep(s, n): return " ".join([s] * n)
scenarios = {
    "same action and observation 4 times": "U " + rep("A:ls O:same", 4),
    "only 3 times": "U " + rep("A:ls O:same", 3),
    "one observation differs": "U " + rep("A:ls O:same", 3) + " A:ls O:other",
    "one thought differs": "U T:ls O:same " + rep("A:ls O:same", 3),
    "user message inside the loop": rep("A:ls O:same", 2) + " U " + rep("A:ls O:same", 2),
    "older loop outside the window": rep("A:ls O:same", 4) + " " + rep("A:a O:a A:b O:b A:c O:c", 2),
    "same action failing 4 times": "U " + rep("A:x E:boom", 4),
    "same action failing 3 times": "U " + rep("A:x E:boom", 3),
    "4 failures with different errors": "U A:x E:e1 A:x E:e2 A:x E:e3 A:x E:e4",
    "4 failures, one success between": "U A:x E:boom A:x O:ok " + rep("A:x E:boom", 2),
    "unparsed calls, same arguments": "U " + rep("B:{bad E:invalid", 4),
    "unparsed calls, corrected arguments": "U B:{a E:invalid B:{b E:invalid B:{c E:invalid B:{d E:invalid",
    "3 agent messages": "U M M M",
    "2 agent messages": "U A:ls O:x M M",
    "environment messages and summaries passed over": "U M N M S M",
    "an action between messages": "U M M A:ls O:x M",
    "a pause between messages": "U M M P M",
    "alternating 6": "U " + rep("A:a O:oa A:b O:ob", 3),
    "alternating with errors": "U " + rep("A:a E:ea A:b O:ob", 3),
    "alternating only 5": "U A:b O:ob " + rep("A:a O:oa A:b O:ob", 2),
    "alternating results differ": "U A:a O:oa A:b O:ob A:a O:OTHER A:b O:ob A:a O:oa A:b O:ob",
    "long run without loops": "U " + " ".join(f"A:c{i} O:o{i}" for i in range(15)),
}
out = []
for name, script in scenarios.items():
    evs = build(script)
    # CondensationSummaryEvent is never persisted; keep it in the fixture as JSON anyway.
    d = StuckDetector(FakeState(evs))
    out.append({"name": name, "script": script, "stuck": d.is_stuck(), "nudge": d.get_action_error_nudge() is not None,
                "events": [json.loads(e.model_dump_json(exclude_none=True)) for e in evs]})
json.dump({"generator": "openhands-sdk 1.43.1 StuckDetector", "scenarios": out}, sys.stdout, indent=1)
