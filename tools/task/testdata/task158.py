# The reference 1.58.2's side of TestReference158TaskCalls, in one process
# (its imports take seconds):
#
# 1. It writes a conversation of its own on disk: an agent with the task
#    tool set and a critic (AgentFinishedCritic with iterative refinement,
#    one extra iteration) hands a task to a sub-agent, finishes, is sent
#    back once by the critic, and finishes again. It prints
#    "wrote <id> <status>"; gohands then loads and continues it.
# 2. It loads the conversation gohands wrote, with sub-agent calls, and
#    checks that every event reads and re-dumps (as the reference writes
#    its event files: without None values) to the bytes on disk, and that
#    the task calls are read as the task tool's own types ("ok [...]").
#    Then it resumes that conversation (a LocalConversation on the same
#    persistence directory, its agent with the task tool set) and runs one
#    more turn, which finishes ("resumed <status> [tools]").
#
# Both use the scripted model at <model url> (taskModel in
# compat158_test.go).
#   python task158.py <model url> <persistence base> <workspace> <gohands conversation dir> <gohands conversation id>
import sys, uuid, os, warnings
warnings.filterwarnings("ignore")
from pydantic import SecretStr
from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.conversation.state import ConversationState
from openhands.sdk.critic import AgentFinishedCritic, IterativeRefinementConfig
from openhands.sdk.subagent.registry import register_agent
from openhands.sdk.tool import Tool
from openhands.sdk.workspace import LocalWorkspace
import openhands.tools.task  # registers TaskAction / TaskObservation

model, base, work, d, cid = sys.argv[1:6]
llm = LLM(model="openai/gpt-4o", base_url=model.rstrip("/") + "/v1",
          api_key=SecretStr("scripted"), usage_id="agent", num_retries=0)

# 1. The reference's own conversation. The sub-agent has no tools but the
# built-in finish (no terminal to start).
register_agent("counter", lambda l: Agent(llm=l, tools=[]), "Counts files.")
critic = AgentFinishedCritic(iterative_refinement=IterativeRefinementConfig(success_threshold=0.6, max_iterations=1))
conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name="task_tool_set")], critic=critic),
                    workspace=work, persistence_dir=base, visualizer=None)
conv.send_message("REF-TASK-9: have the files counted")
conv.run()
print("wrote", conv.id, str(conv.state.execution_status.value), flush=True)
conv.close()

# 2. The conversation gohands wrote.
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

conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name="task_tool_set")]), workspace=d,
                    persistence_dir=os.path.dirname(d), conversation_id=uuid.UUID(cid), visualizer=None)
before = len(conv.state.events)
assert before == len(events), (before, len(events))
conv.send_message("thanks, now finish")
conv.run()
after = list(conv.state.events)
tools = [e.tool_name for e in after[before:] if type(e).__name__ == "ActionEvent"]
print("resumed", str(conv.state.execution_status.value), tools)
