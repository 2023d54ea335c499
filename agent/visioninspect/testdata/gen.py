# Writes the 1.58.2 inspect_image_with_vision fixtures of this directory
# with the reference's own classes: one model_dump_json(exclude_none=True)
# per file, fixed ids and timestamps. Run with the 1.58.2 venv's python:
# python gen.py
import os, warnings
warnings.filterwarnings("ignore")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
from openhands.sdk.event import ActionEvent, ObservationEvent
from openhands.sdk.llm import MessageToolCall, TextContent
from openhands.sdk.tool.builtins.vision_inspect import VisionInspectAction, VisionInspectObservation

here = os.path.dirname(os.path.abspath(__file__))
TS = "2026-10-02T09:41:17.503318"
args = '{"image_index": 0, "question": "What colour?", "profile_name": "eye"}'
evs = {
    "action": ActionEvent(id="00000001-1111-4222-8333-444455556666", timestamp=TS,
                          thought=[TextContent(text="look")],
                          action=VisionInspectAction(image_index=0, question="What colour?", profile_name="eye"),
                          tool_name="inspect_image_with_vision", tool_call_id="call_1",
                          tool_call=MessageToolCall(id="call_1", name="inspect_image_with_vision", arguments=args, origin="completion"),
                          llm_response_id="resp-1"),
    "observation": ObservationEvent(id="00000002-1111-4222-8333-444455556666", timestamp=TS,
                                    observation=VisionInspectObservation.from_text(
                                        text="Red.", image_index=0, question="What colour?", profile_name="eye",
                                        model="openai/gpt-4o", base_url="http://x/v1", answer="Red."),
                                    tool_name="inspect_image_with_vision", tool_call_id="call_1",
                                    action_id="00000001-1111-4222-8333-444455556666"),
    "observation_error": ObservationEvent(id="00000003-1111-4222-8333-444455556666", timestamp=TS,
                                          observation=VisionInspectObservation.from_text(
                                              text="Image index 3 is out of range.", is_error=True,
                                              image_index=3, question="What colour?", profile_name="eye"),
                                          tool_name="inspect_image_with_vision", tool_call_id="call_1",
                                          action_id="00000001-1111-4222-8333-444455556666"),
}
for name, ev in evs.items():
    with open(os.path.join(here, name + ".json"), "w") as f:
        f.write(ev.model_dump_json(exclude_none=True))
