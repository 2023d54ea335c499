# Captures the generateContent requests the Python reference sends, into
# llm/gemini/testdata/reference_requests.json.
import base64, json, os, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer
os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
from pydantic import SecretStr
from openhands.sdk import LLM, Message, TextContent, ImageContent
from openhands.sdk.llm.message import MessageToolCall
from openhands.sdk.tool.builtins import ThinkTool

captured = []
REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}],
         "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}, "modelVersion": "m", "responseId": "r1"}

class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        captured.append({"path": self.path, "headers": {k: v for k, v in self.headers.items() if k.lower() in ("x-goog-api-key", "authorization")}, "body": body})
        out = json.dumps(REPLY).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
    def log_message(self, *a): pass

srv = HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{srv.server_port}"
sig = base64.b64encode(b"\x01sig-bytes").decode()
msgs = [
    Message(role="system", content=[TextContent(text="SYS static"), TextContent(text="SYS dynamic")]),
    Message(role="user", content=[TextContent(text="do it"), ImageContent(image_urls=["data:image/png;base64,iVBORw0KGgo="])]),
    Message(role="assistant", content=[TextContent(text="ok")], reasoning_content="thinking it over",
            tool_calls=[MessageToolCall(id="call_a__thought__" + sig, name="think", arguments='{"thought":"ls"}', origin="completion"),
                        MessageToolCall(id="call_b", name="think", arguments='{"thought":"pwd"}', origin="completion")]),
    Message(role="tool", tool_call_id="call_a__thought__" + sig, name="think", content=[TextContent(text="file1")]),
    Message(role="tool", tool_call_id="call_b", name="think", content=[TextContent(text="/root")]),
]
tools = [ThinkTool.create()[0]]
for m in sys.argv[2:]:
    llm = LLM(model=m, api_key=SecretStr("test-key"), base_url=base, usage_id="x", num_retries=1)
    llm.completion(messages=msgs, tools=tools)
json.dump(captured, open(sys.argv[1], "w"), indent=1, sort_keys=True)
print(len(captured), "requests")
