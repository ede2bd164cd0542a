"""Small servers on loopback for the outbound HTTP tests: each counts the requests it received, so a test can
prove that a refused call never reached it."""

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self.paths: list[str] = []
        self.posted: list[tuple[bytes, dict]] = []  # (body, headers) of each POST
        self.answer = (200, json.dumps([{"id": "a", "title": "A"}]))

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base(self) -> str:
        return f"http://{self.server_address[0]}:{self.port}"


class Handler(BaseHTTPRequestHandler):
    """/ answers server.answer; /redirect?to=URL answers 302 to URL; /slow sleeps 3 s; /trickle sends its
    status line a byte at a time, forever; /trickle-body a valid head, then 100 bytes of body 0.1 s apart."""

    server: Server

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.paths.append(self.path)
        url = urlsplit(self.path)
        try:
            if url.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", parse_qs(url.query)["to"][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif url.path == "/slow":
                time.sleep(3)
                self._send(200, "[]")
            elif url.path == "/trickle-body":  # a valid head, then its body a byte at a time
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                for _ in range(100):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            elif url.path == "/trickle":
                for _ in range(100):
                    self.wfile.write(b"H")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                self._send(*self.server.answer)
        except OSError:  # the client gave up: as it should
            pass

    def do_POST(self):
        """A POST is recorded (body and headers), then answered as the GET of its path."""
        length = int(self.headers.get("Content-Length") or 0)
        self.server.posted.append((self.rfile.read(length), dict(self.headers)))
        self.do_GET()

    def _send(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def serving(host="127.0.0.1"):
    server = Server((host, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def not_http(host="127.0.0.1"):
    """A port that is open and speaks something else (like Redis or SSH would): it greets and hangs up.
    Yields (port, connections accepted)."""
    listener = socket.create_server((host, 0))
    accepted: list[int] = []

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            with conn:
                conn.sendall(b"-ERR unknown command\r\n")

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        listener.close()


def closed_port(host="127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
