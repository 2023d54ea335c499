# Regenerates the reference_*.json fixtures with the Python reference (openhands-sdk 1.43.1):
#   $(bash /work/shared/reference/setup.sh --print) hook/testdata/gen_reference.py
from openhands.sdk.hooks.config import HookConfig
from openhands.sdk.hooks.types import HookEvent

e = HookEvent(event_type="PreToolUse", tool_name="terminal", tool_input={"command": "ls"}, session_id="s", working_dir="/w")
open("hook/testdata/reference_hook_event.json", "w").write(e.model_dump_json() + "\n")
c = HookConfig.from_dict({"hooks": {
    "PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "a.sh", "async": True}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "check", "timeout": 5}]}],
}})
open("hook/testdata/reference_hook_config.json", "w").write(c.model_dump_json() + "\n")
