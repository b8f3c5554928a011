"""A latency-adding reverse proxy for the side-by-side run: one listener per OpenStack API, each
request held DELAY ms before it is forwarded, as a cloud across a WAN would answer. Standard
library only (asyncio); every client connection is served on its own, so concurrent requests are
delayed concurrently, never one after another.

Keystone's answers (the token's service catalog, version documents) name the services'
127.0.0.1:PORT URLs; every response body is rewritten to name the proxies instead, so a client
that authenticates through the proxy uses only proxied endpoints. Only HTTP between the clients
and the API services passes here: the services' own traffic (MariaDB, RabbitMQ, token
validation by keystonemiddleware) goes direct and is not slowed.

usage: proxy.py DELAY_MS UPSTREAM_PORT:LISTEN_PORT [...]"""
import asyncio
import re
import sys

DELAY = float(sys.argv[1]) / 1000.0
PORTS = dict((int(u), int(p)) for u, p in (a.split(":") for a in sys.argv[2:]))
HOST = b"127.0.0.1"
URL = re.compile(rb"(127\.0\.0\.1|localhost):(\d+)")


def rewrite(body):
    def swap(m):
        port = int(m.group(2))
        if port not in PORTS:
            return m.group(0)
        return HOST + b":" + str(PORTS[port]).encode()
    return URL.sub(swap, body)


async def read_head(reader):
    """The request or status line and headers, as (first line, [(name, value)]); None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head[:-4].split(b"\r\n")
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers.append((name.strip(), value.strip()))
    return lines[0], headers


def header(headers, name):
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


async def read_body(reader, headers, until_eof):
    if (header(headers, b"transfer-encoding") or b"").lower() == b"chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers from these services
                return body
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = header(headers, b"content-length")
    if length is not None:
        return await reader.readexactly(int(length))
    return await reader.read() if until_eof else b""


def encode(first, headers, body):
    skip = {b"content-length", b"transfer-encoding", b"connection", b"keep-alive",
            b"accept-encoding"}
    out = [first]
    out += [k + b": " + v for k, v in headers if k.lower() not in skip]
    out.append(b"Content-Length: " + str(len(body)).encode())
    return out


async def forward(upstream, first, headers, body):
    """One request to the service on a fresh connection (closed after), its whole answer back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", upstream)
    try:
        lines = encode(first, headers, body) + [b"Connection: close"]
        writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        await writer.drain()
        status, response_headers = await read_head(reader)
        no_body = first.startswith(b"HEAD ") or status.split(b" ")[1] in (b"204", b"304")
        response = b"" if no_body else await read_body(reader, response_headers, True)
        return status, response_headers, response, no_body
    finally:
        writer.close()


async def serve(upstream, reader, writer):
    try:
        while True:
            request = await read_head(reader)
            if request is None:
                return
            first, headers = request
            body = await read_body(reader, headers, False)
            await asyncio.sleep(DELAY)
            status, response_headers, response, no_body = await forward(
                upstream, first, headers, body)
            response = rewrite(response)
            response_headers = [(k, rewrite(v)) for k, v in response_headers]
            lines = encode(status, response_headers, response)
            if no_body:  # a HEAD or 204 answer keeps the service's own length, if any
                lines = lines[:-1]
            writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + response)
            await writer.drain()
            if (header(headers, b"connection") or b"").lower() == b"close":
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def main():
    servers = []
    for upstream, port in PORTS.items():
        async def handler(r, w, upstream=upstream):
            await serve(upstream, r, w)
        servers.append(await asyncio.start_server(handler, "127.0.0.1", port, backlog=256))
    print("proxy up", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


asyncio.run(main())
