# Writes the 1.58.2 fixtures of this directory with the reference's own
# classes (openhands-sdk/-tools 1.58.2): one model_dump_json(exclude_none=True)
# per file, fixed ids and timestamps. Run with the 1.58.2 venv's python:
#   python gen.py
import os, warnings
warnings.filterwarnings("ignore")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
from openhands.sdk.event import (ActionEvent, MessageEvent, ObservationEvent,
                                 SecurityAnalysisEvent)
from openhands.sdk.llm import Message, MessageToolCall, TextContent
from openhands.sdk.critic.result import CriticResult
from openhands.sdk.security.risk import SecurityRisk
from openhands.sdk.tool.builtins.classify_and_switch_llm import (
    ClassifyAndSwitchLLMAction, ClassifyAndSwitchLLMObservation)
from openhands.sdk.tool.builtins.finish import FinishAction
from openhands.tools.ask_oracle.definition import AskOracleAction, AskOracleObservation
from openhands.tools.child_conversation.definition import (
    StartChildConversationAction, StartChildConversationObservation)

here = os.path.dirname(os.path.abspath(__file__))
TS = "2026-10-02T09:41:17.503318"


def gid(n):
    return f"{n:08x}-1111-4222-8333-444455556666"


def write(name, ev):
    with open(os.path.join(here, name + ".json"), "w") as f:
        f.write(ev.model_dump_json(exclude_none=True))


def action(n, act, tool, args, **kw):
    return ActionEvent(id=gid(n), timestamp=TS, parent_id=gid(n - 1),
                       thought=[TextContent(text="thinking")], action=act,
                       tool_name=tool, tool_call_id=f"call_{n}",
                       tool_call=MessageToolCall(id=f"call_{n}", name=tool, arguments=args, origin="completion"),
                       llm_response_id="resp-1", **kw)


def observation(n, obs, tool):
    return ObservationEvent(id=gid(n), timestamp=TS, parent_id=gid(n - 1), observation=obs,
                            tool_name=tool, tool_call_id=f"call_{n - 1}", action_id=gid(n - 1))


write("SecurityAnalysisEvent", SecurityAnalysisEvent(
    id=gid(1), timestamp=TS, parent_id=gid(0), analyzer="PatternSecurityAnalyzer", policy="ConfirmRisky",
    risks={gid(3): SecurityRisk.HIGH, gid(2): SecurityRisk.LOW},
    details={gid(3): {"matched": ["curl | sh"], "score": 0.9, "nested": {"a": None}}}))
write("SecurityAnalysisEvent_min", SecurityAnalysisEvent(
    id=gid(2), timestamp=TS, analyzer="LLMSecurityAnalyzer", policy="NeverConfirm", risks={}))
write("ActionEvent_askoracle", action(11, AskOracleAction(question="Which fix?", context="tried A"),
                                      "ask_oracle", '{"question": "Which fix?", "context": "tried A"}'))
write("ObservationEvent_askoracle", observation(12, AskOracleObservation.from_text("Use B."), "ask_oracle"))
write("ActionEvent_classify", action(13, ClassifyAndSwitchLLMAction(), "classify_and_switch_llm", "{}",
                                     security_risk=SecurityRisk.LOW))
write("ObservationEvent_classify", observation(14, ClassifyAndSwitchLLMObservation(
    content=[TextContent(text="switched")], chosen_class="hard", model="gpt-5", active_model="gpt-5"),
    "classify_and_switch_llm"))
write("ActionEvent_child", action(15, StartChildConversationAction(task="fix the tests", title="tests"),
                                  "start_child_conversation", '{"task": "fix the tests"}'))
write("ObservationEvent_child", observation(16, StartChildConversationObservation(
    content=[TextContent(text="started")], conversation_id="c0ffee", parent_conversation_id="beef",
    isolation="worktree", status="running", title="tests", url="http://127.0.0.1:8000/c0ffee",
    workspace="/tmp/wt"), "start_child_conversation"))
write("ActionEvent_finish_critic", action(17, FinishAction(message="done"), "finish", '{"message": "done"}',
                                          critic_result=CriticResult(score=0.82, message="likely fine",
                                                                     metadata={"event_ids": [gid(16)]})))
write("MessageEvent_critic", MessageEvent(
    id=gid(18), timestamp=TS, source="agent", llm_message=Message(role="assistant", content=[TextContent(text="Done.")]),
    critic_result=CriticResult(score=0.25, message=None)))
