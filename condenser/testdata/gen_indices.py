# Regenerates reference_indices.json: random event sequences and the
# manipulation indices the Python reference (openhands-sdk 1.43.1) computes:
#   $(bash /work/shared/reference/setup.sh --print) condenser/testdata/gen_indices.py
# Tokens: S system prompt, U user message, A:<resp>:<call> action,
# T:<resp>:<call> action with thinking blocks, O:<call> observation,
# R:<call> user rejection, E:<call> agent error.
import json, random
from openhands.sdk import LLM
from openhands.sdk.context.condenser import LLMSummarizingCondenser
from openhands.sdk.context.view import View
from openhands.sdk.event import ActionEvent, AgentErrorEvent, MessageEvent, ObservationEvent, SystemPromptEvent, UserRejectObservation
from openhands.sdk.llm import Message, MessageToolCall, TextContent, ThinkingBlock
from openhands.sdk.tool.builtins.think import ThinkObservation

def make(tok):
    k, *a = tok.split(":")
    if k == "S":
        return SystemPromptEvent(system_prompt=TextContent(text="s"), tools=[])
    if k == "U":
        return MessageEvent(source="user", llm_message=Message(role="user", content=[TextContent(text="u")]))
    if k in "AT":
        return ActionEvent(thought=[TextContent(text="t")], tool_name="think", tool_call_id=a[1],
            tool_call=MessageToolCall(id=a[1], name="think", arguments="{}", origin="completion"), llm_response_id=a[0],
            thinking_blocks=[ThinkingBlock(thinking="h", signature="x")] if k == "T" else [])
    if k == "O":
        return ObservationEvent(tool_name="think", tool_call_id=a[0], action_id="x", observation=ThinkObservation(content=[TextContent(text="o")]))
    if k == "R":
        return UserRejectObservation(tool_name="think", tool_call_id=a[0], action_id="x")
    if k == "E":
        return AgentErrorEvent(tool_name="think", tool_call_id=a[0], error="e")

cond = LLMSummarizingCondenser(llm=LLM(model="openai/gpt-4o", usage_id="condenser"), max_size=8, keep_first=2)
rng = random.Random(42)
cases = []
for n in range(200):
    seq, resp, call = ["S", "U"], 0, 0
    for _ in range(rng.randint(1, 10)):
        r = rng.random()
        if r < 0.2:
            seq.append("U")
            continue
        resp += 1
        k = "T" if r < 0.35 else "A"
        calls = []
        for i in range(rng.randint(1, 3)):
            call += 1
            calls.append(f"c{call}")
            seq.append(f"{k if i == 0 else 'A'}:r{resp}:c{call}")
        if rng.random() < 0.1 and len(cases) % 2:  # leave the last batch unanswered now and then
            break
        for c in calls:
            seq.append(rng.choice(["O", "O", "O", "R", "E"]) + ":" + c)
    v = View(events=[make(t) for t in seq])
    case = {"events": seq, "indices": sorted(v.manipulation_indices)}
    # The forgetting range for max_size 8 (events) and for a request, with
    # keep_first 2: [start, end), or null when the reference finds none.
    for key, request in (("events_range", False), ("request_range", True)):
        view = View(events=v.events, unhandled_condensation_request=request)
        try:
            if not cond.get_condensation_reasons(view):
                raise ValueError("no reason")
            forgotten, start = cond._get_forgotten_events(view)
            if not forgotten or len(forgotten) < len(view) * cond.minimum_progress:
                raise ValueError("too little")
            case[key] = [start, start + len(forgotten)]
        except ValueError:
            case[key] = None
    cases.append(case)
open("condenser/testdata/reference_indices.json", "w").write(json.dumps(cases) + "\n")
