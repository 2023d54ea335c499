# Loads a conversation gohands wrote, with sub-agent calls, with the
# reference 1.58.2 and checks that every event reads and re-dumps (as the
# reference writes its event files: without None values) to the bytes on
# disk, and that the task calls are read as the task tool's own types.
# Then the reference resumes the conversation (a LocalConversation on the
# same persistence directory, its agent with the task tool set) and runs
# one more turn on the scripted model at <model url>, which finishes.
#   python check158.py <conversation dir> <conversation id> <model url>
import sys, uuid, os, warnings
warnings.filterwarnings("ignore")
from openhands.sdk.conversation.state import ConversationState
from openhands.sdk.workspace import LocalWorkspace
import openhands.tools.task  # registers TaskAction / TaskObservation

d, cid, model = sys.argv[1], sys.argv[2], sys.argv[3]
st = ConversationState.create(id=uuid.UUID(cid), agent=None,
                              workspace=LocalWorkspace(working_dir=d), persistence_dir=d)
events = list(st.events)
names = sorted(x for x in os.listdir(os.path.join(d, "events")) if x.startswith("event-"))
assert len(events) == len(names), (len(events), len(names))
kinds = []
for i, e in enumerate(events):
    on_disk = open(os.path.join(d, "events", names[i])).read()
    assert e.model_dump_json(exclude_none=True) == on_disk, (i, e.model_dump_json(exclude_none=True), on_disk)
    for k in ("action", "observation"):
        v = getattr(e, k, None)
        if v is not None:
            assert type(v).__module__.startswith("openhands.tools.task"), type(v)
            kinds.append(type(v).__name__ + ("(resume=%s)" % v.resume if k == "action" and v.resume else ""))
print("ok", kinds)

from pydantic import SecretStr
from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.tool import Tool

llm = LLM(model="openai/gpt-4o", base_url=model.rstrip("/") + "/v1",
          api_key=SecretStr("scripted"), usage_id="agent", num_retries=0)
conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name="task_tool_set")]), workspace=d,
                    persistence_dir=os.path.dirname(d), conversation_id=uuid.UUID(cid), visualizer=None)
before = len(conv.state.events)
assert before == len(events), (before, len(events))
conv.send_message("thanks, now finish")
conv.run()
after = list(conv.state.events)
tools = [e.tool_name for e in after[before:] if type(e).__name__ == "ActionEvent"]
print("resumed", str(conv.state.execution_status.value), tools)
