"""Loads the gohands-written conversation with the Python reference.

Run with the reference's interpreter (bash /work/shared/reference/setup.sh --print):
    python check.py <copy of 0f6e1d2c3b4a49588776a5b4c3d2e1f0>
"""
import sys, uuid, json, os
from openhands.sdk.conversation.state import ConversationState
from openhands.sdk.workspace import LocalWorkspace
import openhands.tools.terminal  # registers TerminalAction / TerminalObservation

d = sys.argv[1]
st = ConversationState.create(id=uuid.UUID("0f6e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"), agent=None,
                              workspace=LocalWorkspace(working_dir="/workspace/project"), persistence_dir=d)
events = list(st.events)
assert len(events) == 4, len(events)
for i, e in enumerate(events):
    name = [n for n in os.listdir(os.path.join(d, "events")) if n.startswith(f"event-{i:05d}-")][0]
    on_disk = open(os.path.join(d, "events", name)).read()
    assert e.model_dump_json(exclude_none=True) == on_disk, (i, e.model_dump_json(exclude_none=True), on_disk)
assert st.execution_status.value == "running"
assert st.leaf_event_id == events[-1].id
assert [e.id for e in st.active_branch()] == [e.id for e in events]
un = ConversationState.get_unmatched_actions(events)
assert [a.tool_call_id for a in un] == ["call_000002"], un
assert type(st.confirmation_policy).__name__ == "ConfirmRisky"
print("ok: reference loaded", len(events), "events; kinds", [type(e).__name__ for e in events])
