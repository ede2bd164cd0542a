"""A small keep-alive HTTP/1.1 client on stdlib asyncio, one connection per load-benchmark participant."""

from __future__ import annotations

import asyncio


class HttpError(Exception):
    pass


class Connection:
    def __init__(self, port: int, timeout: float):
        self.port, self.timeout = port, timeout
        self.reader = self.writer = None
        self.cookies: dict[str, str] = {}

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        try:
            async with asyncio.timeout(self.timeout):  # no extra task per request, unlike wait_for
                return await self._request(method, path, body, headers or {})
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.close()
            raise HttpError(f"{type(exc).__name__}: {exc}") from None

    async def _request(self, method, path, body, headers):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Connection: keep-alive"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise asyncio.IncompleteReadError(b"", None)
        status = int(status_line.split()[1])
        length, chunked, close = await self._headers_read()
        if chunked:
            data = await self._chunks_read()
        elif length is not None:
            data = await self.reader.readexactly(length)
        else:
            data = await self.reader.read()
            close = True
        if close:
            await self.close()
        return status, data

    async def _headers_read(self) -> tuple[int | None, bool, bool]:
        """The answer's headers: its Content-Length (None if not given), whether it is chunked, whether the
        server closes the connection; cookies set are kept."""
        length, chunked, close = None, False, False
        while True:
            line = (await self.reader.readline()).decode("latin-1").strip()
            if not line:
                return length, chunked, close
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            elif name == "connection" and value.lower() == "close":
                close = True
            elif name == "set-cookie":
                cookie = value.split(";", 1)[0]
                key, _, val = cookie.partition("=")
                self.cookies[key.strip()] = val.strip()

    async def _chunks_read(self) -> bytes:
        """A chunked body, to its last (empty) chunk."""
        data = b""
        while True:
            size = int((await self.reader.readline()).strip(), 16)
            if size == 0:
                await self.reader.readline()
                return data
            data += await self.reader.readexactly(size)
            await self.reader.readline()
