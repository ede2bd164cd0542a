"""A local model server that speaks OpenAI's chat-completions protocol as vLLM, Ollama and llama.cpp's server
do (POST /v1/chat/completions, JSON in, a chat.completion object with usage out), on a thread, for the tests.

It records every request (path, headers, body) and answers by a script: each request takes the next
behaviour from `script`, and with none left the default (`grade_for(prompt)`, a 2 unless a test says
otherwise). Behaviours:
    ("grade", n)        a well-formed completion ending "##final score: n", with usage tokens;
    ("status", code)    an HTTP error with an OpenAI-style error body (429, 500, 503 ...);
    ("status", code, retry_after)  the same with a Retry-After header (seconds or an HTTP date, as text);
    ("slow", seconds)   a grade of 2, after sleeping `seconds` (past the client's timeout);
    ("not_json",)       a 200 whose body is not JSON;
    ("no_grade",)       a well-formed completion whose content has no final score;
    ("no_choices",)     a 200 JSON object without choices;
    ("raw", body)       a 200 whose body is `body` (bytes) as given: a hostile answer.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    """Answers as the scripted behaviours of `fake` (a FakeModelServer, set on a subclass per server) say."""

    fake: FakeModelServer

    def log_message(self, *args):
        pass

    def do_POST(self):
        server = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with server.lock:
            server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            behaviour = server.script.pop(0) if server.script else None
        if self.path != "/v1/chat/completions" or not isinstance(body, dict):
            return self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        prompt = body["messages"][-1]["content"]
        behaviour = behaviour or ("grade", server.grade_for(prompt))
        kind = behaviour[0]
        if kind == "slow":
            time.sleep(behaviour[1])
            behaviour = ("grade", 2)
        elif self._answered_otherwise(behaviour):
            return None
        content = (
            f"M: 2, T: 2\n##final score: {behaviour[1]}" if kind == "grade" else "The passage is about wings."
        )
        self._json(200, _completion(body.get("model"), content, prompt, len(server.requests)))
        return None

    def _answered_otherwise(self, behaviour: tuple) -> bool:
        """The behaviours that answer something other than a completion; False for the others."""
        kind = behaviour[0]
        if kind == "status":
            extra = {"Retry-After": behaviour[2]} if len(behaviour) > 2 else {}
            error = {"error": {"message": "busy", "type": "server_error"}}
            self._json(behaviour[1], error, extra)
        elif kind == "raw":
            self._send(200, behaviour[1], "application/json")
        elif kind == "not_json":
            self._send(200, b"<html>upstream error</html>", "text/html")
        elif kind == "no_choices":
            self._json(200, {"id": "chatcmpl-x", "object": "chat.completion", "choices": []})
        else:
            return False
        return True

    def _json(self, status, data, headers=None):
        self._send(status, json.dumps(data).encode(), "application/json", headers)

    def _send(self, status, data, content_type, headers=None):
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (a timeout test)
            pass


def _completion(model, content: str, prompt: str, number: int) -> dict:
    """An OpenAI-style chat completion answering `content`, with token counts of about 4 characters each."""
    tokens_in = max(1, len(prompt) // 4)
    tokens_out = max(1, len(content) // 4)
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


class FakeModelServer:
    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[tuple] = []
        self.grade_for = lambda prompt: 2
        self.lock = threading.Lock()
        Handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
