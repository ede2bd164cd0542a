"""A local server for the generative systems' tests, on a thread: OpenAI's chat-completions protocol at
POST /v1/chat/completions (as vLLM, Ollama and llama.cpp's server speak it) and the lab's RAG service protocol
at POST /rag (docs/generative-systems.md). It records every request (path, headers, body) and answers by a
script, one behaviour a request, then the default:
    ("content", text)   a chat completion whose answer is `text` (default: "Wings lift [1]. Drag [2].");
    ("service", dict)   a RAG service answer, the dict as JSON (default: {"answer": ..., "retrieved": []});
    ("slow", seconds)   the default answer after `seconds` (past the client's deadline);
    ("status", code)    an HTTP error;
    ("raw", bytes)      a 200 whose body is `bytes` as given (a hostile answer).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_CONTENT = "Wings lift [1]. Drag rises with speed [2]."


class FakeAnswerServer:
    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[tuple] = []
        self.service_default: dict = {"answer": "Nothing [1].", "retrieved": ["1"]}
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    behaviour = server.script.pop(0) if server.script else None
                if behaviour and behaviour[0] == "slow":
                    time.sleep(behaviour[1])
                    behaviour = None
                if behaviour and behaviour[0] == "status":
                    return self._send(behaviour[1], b'{"error": {"message": "busy"}}')
                if behaviour and behaviour[0] == "raw":
                    return self._send(200, behaviour[1])
                if self.path == "/rag":
                    answer = (
                        behaviour[1] if behaviour and behaviour[0] == "service" else server.service_default
                    )
                    return self._send(200, json.dumps(answer).encode())
                if self.path != "/v1/chat/completions":
                    return self._send(404, b"{}")
                content = behaviour[1] if behaviour and behaviour[0] == "content" else DEFAULT_CONTENT
                completion = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "model": (body or {}).get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
                }
                self._send(200, json.dumps(completion).encode())

            def _send(self, status, data):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
