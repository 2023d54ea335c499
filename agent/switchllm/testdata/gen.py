# Writes the 1.58.2 switch_llm fixtures of this directory with the
# reference's own classes: one model_dump_json(exclude_none=True) per file,
# fixed ids and timestamps. Run with the 1.58.2 venv's python: python gen.py
import os, warnings
warnings.filterwarnings("ignore")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
from openhands.sdk.event import ActionEvent, ObservationEvent
from openhands.sdk.llm import MessageToolCall, TextContent
from openhands.sdk.tool.builtins.switch_llm import SwitchLLMAction, SwitchLLMObservation

here = os.path.dirname(os.path.abspath(__file__))
TS = "2026-10-02T09:41:17.503318"
args = '{"profile_name": "strong", "reason": "hard step"}'
evs = {
    "action": ActionEvent(id="00000001-1111-4222-8333-444455556666", timestamp=TS,
                          thought=[TextContent(text="thinking")],
                          action=SwitchLLMAction(profile_name="strong", reason="hard step"),
                          tool_name="switch_llm", tool_call_id="call_1",
                          tool_call=MessageToolCall(id="call_1", name="switch_llm", arguments=args, origin="completion"),
                          llm_response_id="resp-1"),
    "observation": ObservationEvent(id="00000002-1111-4222-8333-444455556666", timestamp=TS,
                                    observation=SwitchLLMObservation.from_text(
                                        text="Switched.", profile_name="strong", reason="hard step", active_model="openai/strong-1"),
                                    tool_name="switch_llm", tool_call_id="call_1",
                                    action_id="00000001-1111-4222-8333-444455556666"),
    "observation_error": ObservationEvent(id="00000003-1111-4222-8333-444455556666", timestamp=TS,
                                          observation=SwitchLLMObservation.from_text(
                                              text="LLM profile 'x' was not found.", is_error=True, profile_name="x", reason="r"),
                                          tool_name="switch_llm", tool_call_id="call_1",
                                          action_id="00000001-1111-4222-8333-444455556666"),
}
for name, ev in evs.items():
    with open(os.path.join(here, name + ".json"), "w") as f:
        f.write(ev.model_dump_json(exclude_none=True))
