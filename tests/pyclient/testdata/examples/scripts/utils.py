"""ManagedAPIServer for the reference's example programs, starting gohands.

The reference's examples/02_remote_agent_server/scripts/utils.py starts
``python -m openhands.agent_server``; this one, which takes its place on the
examples' import path, starts ``$GOHANDS_BIN serve`` with the same interface
(port, host, extra_env, use_session_api_key, health_request_timeout,
max_start_wait_seconds; base_url, session_api_key, process) and the same
environment rules (os.environ wins over extra_env; SESSION_API_KEY set when
a session key is asked for). The one difference: the server listens on a
port it chooses (``--port 0``) and says which, not the example's fixed one,
since a test machine runs many servers at once; the examples only ever use
``base_url``, once the server has started. A port picked here and passed on
could be taken meanwhile by another test's server, which would then get
this one's health checks.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Mapping

import httpx


_SERVING = re.compile(r"serving the agent API on (http://[^\s\"/]+)")


def _stream_output(stream, prefix, target, on_line):
    for line in iter(stream.readline, ""):
        on_line(line)
        target.write(f"[{prefix}] {line}")
        target.flush()
    stream.close()


class ManagedAPIServer:
    def __init__(
        self,
        port: int = 8000,
        host: str = "127.0.0.1",
        *,
        extra_env: Mapping[str, str] | None = None,
        use_session_api_key: bool = False,
        health_request_timeout: float = 1.0,
        max_start_wait_seconds: int = 30,
    ) -> None:
        self.host = host
        self.port = 0  # known once the server listens
        self.base_url = ""
        self._serving = threading.Event()
        self.process: subprocess.Popen[str] | None = None
        self.session_api_key = secrets.token_urlsafe(32) if use_session_api_key else None
        self._extra_env = dict(extra_env) if extra_env else {}
        self._health_request_timeout = health_request_timeout
        self._max_start_wait_seconds = max_start_wait_seconds

    def __enter__(self) -> ManagedAPIServer:
        env_keys = {"LOG_JSON": "true", **self._extra_env}
        if self.session_api_key is not None:
            env_keys["SESSION_API_KEY"] = self.session_api_key
        env = {**env_keys, **os.environ}
        self.process = subprocess.Popen(
            [os.environ["GOHANDS_BIN"], "serve", "--port", "0", "--host", self.host],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        proc = self.process
        for stream, target in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
            threading.Thread(target=_stream_output, args=(stream, "SERVER", target, self._read_line), daemon=True).start()
        deadline = time.time() + self._max_start_wait_seconds
        while time.time() < deadline:
            if not self._serving.wait(0.1):
                if proc.poll() is not None:
                    raise RuntimeError("gohands serve exited before it listened")
                continue
            try:
                r = httpx.get(f"{self.base_url}/health", timeout=self._health_request_timeout)
                if r.status_code == 200:
                    return self
            except httpx.RequestError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("gohands serve exited before becoming healthy")
            time.sleep(0.1)
        raise RuntimeError(f"gohands serve not healthy after {self._max_start_wait_seconds} s")

    def _read_line(self, line: str) -> None:
        m = _SERVING.search(line)
        if m and not self._serving.is_set():
            self.base_url = m.group(1)
            self.port = int(self.base_url.rsplit(":", 1)[1])
            self._serving.set()

    def __exit__(self, *_exc: object) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise RuntimeError("gohands serve did not exit within 10 s of SIGTERM")
