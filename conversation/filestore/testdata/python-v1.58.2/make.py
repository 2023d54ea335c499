# Writes the conversation of this directory with the reference 1.58.2's own
# ConversationState (run with its venv's python: python make.py .): a user
# message, an answered terminal action rated by a PatternSecurityAnalyzer
# (with its SecurityAnalysisEvent), an ask_oracle action and observation,
# an unanswered terminal action, status running, ConfirmRisky, an
# encrypted secret (key "fixture secret key").
import sys, uuid, shutil, os, json, warnings
warnings.filterwarnings("ignore")
from pydantic import SecretStr
from openhands.sdk import LLM, Agent
from openhands.sdk.conversation.state import ConversationState, ConversationExecutionStatus
from openhands.sdk.event import MessageEvent, ActionEvent, ObservationEvent, SecurityAnalysisEvent
from openhands.sdk.llm import Message, TextContent, MessageToolCall
from openhands.sdk.workspace import LocalWorkspace
from openhands.sdk.utils.cipher import Cipher
from openhands.sdk.security.confirmation_policy import ConfirmRisky
from openhands.sdk.security.risk import SecurityRisk
from openhands.sdk.security.defense_in_depth.pattern import PatternSecurityAnalyzer
from openhands.tools.terminal import TerminalAction, TerminalObservation
from openhands.tools.ask_oracle.definition import AskOracleAction, AskOracleObservation

out = sys.argv[1]
cid = uuid.UUID("7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
llm = LLM(model="gpt-4o", api_key=SecretStr("sk-fixture-key"), usage_id="agent", timeout=120)
agent = Agent(llm=llm, tools=[])
cipher = Cipher("fixture secret key")
conv_dir = os.path.join(out, cid.hex)
shutil.rmtree(conv_dir, ignore_errors=True)
st = ConversationState.create(id=cid, agent=agent, workspace=LocalWorkspace(working_dir="/workspace/project"),
                              persistence_dir=conv_dir, cipher=cipher)
st.secret_registry.update_secrets({"GITHUB_TOKEN": "ghp_fixture"})
st.confirmation_policy = ConfirmRisky()
st.security_analyzer = PatternSecurityAnalyzer()
st.tags = {"origin": "python158"}
st.append_event(MessageEvent(source="user", llm_message=Message(role="user", content=[TextContent(text="List the files")])))


def action(n, act, tool, args):
    tc = MessageToolCall(id=f"call_{n}", name=tool, arguments=json.dumps(args), origin="completion")
    return ActionEvent(source="agent", thought=[TextContent(text="Next step.")], action=act, tool_name=tool,
                       tool_call_id=f"call_{n}", tool_call=tc, llm_response_id=f"resp_{n}",
                       security_risk=SecurityRisk.LOW)


a = action(1, TerminalAction(command="ls -la"), "terminal", {"command": "ls -la"})
st.append_event(SecurityAnalysisEvent(analyzer="PatternSecurityAnalyzer", policy="ConfirmRisky",
                                      risks={a.id: SecurityRisk.LOW}, details={a.id: {"matched": []}}))
st.append_event(a)
st.append_event(ObservationEvent(tool_name="terminal", tool_call_id="call_1", action_id=a.id,
                                 observation=TerminalObservation.from_text(text="total 8\nfile.txt\n", command="ls -la", exit_code=0)))
o = action(2, AskOracleAction(question="Is this enough?"), "ask_oracle", {"question": "Is this enough?"})
st.append_event(o)
st.append_event(ObservationEvent(tool_name="ask_oracle", tool_call_id="call_2", action_id=o.id,
                                 observation=AskOracleObservation.from_text("Check hidden files too.")))
st.append_event(action(3, TerminalAction(command="ls -la .git"), "terminal", {"command": "ls -la .git"}))
st.execution_status = ConversationExecutionStatus.RUNNING
print(conv_dir)
