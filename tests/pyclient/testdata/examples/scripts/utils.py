"""ManagedAPIServer for the reference's example programs, starting gohands.

The reference's examples/02_remote_agent_server/scripts/utils.py starts
``python -m openhands.agent_server``; this one, which takes its place on the
examples' import path, starts ``$GOHANDS_BIN serve`` with the same interface
(port, host, extra_env, use_session_api_key, health_request_timeout,
max_start_wait_seconds; base_url, session_api_key, process) and the same
environment rules (os.environ wins over extra_env; SESSION_API_KEY set when
a session key is asked for). The one difference: the server listens on a
free port, not the example's fixed one, since a test machine runs many
servers at once; the examples only ever use ``base_url``.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping

import httpx


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _stream_output(stream, prefix, target):
    for line in iter(stream.readline, ""):
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
        self.port = _free_port(host)
        self.base_url = f"http://{host}:{self.port}"
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
            [os.environ["GOHANDS_BIN"], "serve", "--port", str(self.port), "--host", self.host],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        proc = self.process
        for stream, target in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
            threading.Thread(target=_stream_output, args=(stream, "SERVER", target), daemon=True).start()
        deadline = time.time() + self._max_start_wait_seconds
        while time.time() < deadline:
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
