"""A simple TCP balancer for the load benchmark's `--nodes` (bench/load.py): each new connection goes to the
next node in turn (round robin), and its bytes are copied both ways until either side closes. A connection
stays on its node, as with a layer-4 balancer; gunicorn's sync workers close each connection after one
request, so the load spreads request by request.

    python bench/load_balancer.py --listen 8000 --to 8001,8002

Run as a process of its own so that its CPU is counted apart from the load generator's."""

from __future__ import annotations

import argparse
import asyncio
import itertools

CHUNK = 64 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def serve(listen: int, nodes: list[int]) -> None:
    turn = itertools.cycle(nodes)

    async def connect(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            node_reader, node_writer = await asyncio.open_connection("127.0.0.1", next(turn))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, node_writer), _pipe(node_reader, client_writer))

    server = await asyncio.start_server(connect, "127.0.0.1", listen, backlog=2048)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--to", required=True, help="the nodes' ports on 127.0.0.1, comma-separated")
    args = parser.parse_args()
    asyncio.run(serve(args.listen, [int(port) for port in args.to.split(",")]))


if __name__ == "__main__":
    main()
