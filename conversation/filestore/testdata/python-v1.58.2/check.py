# Loads a conversation gohands wrote with the reference 1.58.2 and checks
# that every event reads and re-dumps to the bytes on disk, and that the
# state's analyzer is the reference's PatternSecurityAnalyzer.
#   python check.py <conversation dir> <conversation id> <event count>
import sys, uuid, os, warnings
warnings.filterwarnings("ignore")
from openhands.sdk.conversation.state import ConversationState
from openhands.sdk.workspace import LocalWorkspace
import openhands.tools.terminal  # registers TerminalAction / TerminalObservation

d, cid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
st = ConversationState.create(id=uuid.UUID(cid), agent=None,
                              workspace=LocalWorkspace(working_dir="/workspace/project"), persistence_dir=d)
events = list(st.events)
assert len(events) == n, (len(events), n)
for i, e in enumerate(events):
    name = [x for x in os.listdir(os.path.join(d, "events")) if x.startswith(f"event-{i:05d}-")][0]
    on_disk = open(os.path.join(d, "events", name)).read()
    assert e.model_dump_json(exclude_none=True) == on_disk, (i, e.model_dump_json(exclude_none=True), on_disk)
assert type(st.security_analyzer).__name__ == "PatternSecurityAnalyzer", type(st.security_analyzer)
assert len(st.security_analyzer.high_patterns) > 0
print("ok", [type(e).__name__ for e in events])
