"""A framegate worker in Python, written from docs/LINK.md alone: it links to
every gateway socket in --link-dir, registers, and serves one app, an echo
(every message comes back to its sender as it came: text as text, binary as
binary). It is the check that the document is enough to write a worker.

    protoc -I proto --python_out=GEN proto/framegate/link.proto
    PYTHONPATH=GEN python3 python_worker.py --link-dir /tmp/framegate --id py1

Only the Python standard library and Debian's python3-protobuf. Prints
"ready: N link(s) registered" on stderr each time every socket found has a
Welcome.
"""

import argparse
import asyncio
import os
import re
import signal
import struct
import sys

from framegate import link_pb2 as pb

HEADER = struct.Struct(">2sBBI")  # "FG", version, flags, length: big-endian, 8 bytes
MAGIC = b"FG"
VERSION = 1
MAX_ENVELOPE = 32 * 1024 * 1024
SOCKET_RE = re.compile(r"^link-(0|[1-9][0-9]*)\.sock$")
WELCOME_TIMEOUT = 5.0
BACKOFF_MIN, BACKOFF_MAX = 0.05, 2.0


class ProtocolError(Exception):
    pass


def frame(envelope):
    body = envelope.SerializeToString()
    return HEADER.pack(MAGIC, VERSION, 0, len(body)) + body


class Decoder:
    """Bytes in, envelopes out; keeps a partial envelope for the next feed."""

    def __init__(self, limit):
        self.limit = limit
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data
        out, off = [], 0
        while len(self.buf) - off >= HEADER.size:
            magic, version, _flags, length = HEADER.unpack_from(self.buf, off)
            if magic != MAGIC:
                raise ProtocolError("bad magic")
            if version != VERSION:
                raise ProtocolError(f"unsupported link version {version}")
            if length > self.limit:
                raise ProtocolError(f"envelope of {length} bytes over the limit")
            if len(self.buf) - off - HEADER.size < length:
                break
            env = pb.Envelope()
            start = off + HEADER.size
            env.ParseFromString(bytes(self.buf[start:start + length]))
            out.append(env)
            off = start + length
        del self.buf[:off]
        return out


class Link:
    """One link: to the gateway thread listening on link-<index>.sock."""

    def __init__(self, worker, index, path):
        self.worker, self.index, self.path = worker, index, path
        self.ready = False

    async def run(self):
        backoff = BACKOFF_MIN
        while True:
            try:
                await self.serve()
                backoff = BACKOFF_MIN
            except (OSError, ProtocolError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                log(f"link {self.index}: {type(e).__name__}: {e}; reconnecting")
            self.ready = False
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    async def serve(self):
        reader, writer = await asyncio.open_unix_connection(self.path)
        try:
            hello = pb.Envelope()
            r = hello.register
            r.worker_id, r.pid, r.version = self.worker.id, os.getpid(), "0.1.0"
            r.paths.extend(self.worker.paths)
            r.link_index, r.max_envelope = self.index, MAX_ENVELOPE
            writer.write(frame(hello))
            await writer.drain()
            decoder = Decoder(MAX_ENVELOPE)
            pending = []
            while not pending:  # the first envelope must be Welcome
                data = await asyncio.wait_for(reader.read(65536), WELCOME_TIMEOUT)
                if not data:
                    raise ProtocolError("the gateway closed the link before Welcome")
                pending = decoder.feed(data)
            if pending[0].WhichOneof("body") != "welcome":
                raise ProtocolError(f"expected Welcome, got {pending[0].WhichOneof('body')}")
            welcome = pending.pop(0).welcome
            self.ready = True
            self.worker.on_link_ready(self, welcome)
            while True:
                out = bytearray()
                highest = 0
                for env in pending:
                    highest = max(highest, self.handle(env, out))
                if highest:
                    ack = pb.Envelope()
                    ack.ack.seq = highest
                    out += frame(ack)
                if out:
                    writer.write(bytes(out))
                    await writer.drain()
                data = await reader.read(65536)
                if not data:
                    raise ProtocolError("the gateway closed the link")
                pending = decoder.feed(data)
        finally:
            self.worker.forget_link(self)
            writer.close()

    def handle(self, env, out):
        """Handles one envelope, appending replies to `out`; returns its seq (0: not a Message)."""
        kind = env.WhichOneof("body")
        if kind == "opened":
            self.worker.conns[env.opened.conn_id] = self
        elif kind == "closed":
            self.worker.conns.pop(env.closed.conn_id, None)
        elif kind == "message":
            m = env.message
            if self.worker.conns.get(m.conn_id) is self:
                reply = pb.Envelope()
                reply.send.conn_ids.append(m.conn_id)
                reply.send.binary = m.binary
                reply.send.payload = m.payload
                out += frame(reply)
            return m.seq
        elif kind == "ping":
            pong = pb.Envelope()
            pong.pong.nonce = env.ping.nonce
            out += frame(pong)
        return 0


class Worker:
    def __init__(self, worker_id, link_dir, paths):
        self.id, self.link_dir, self.paths = worker_id, link_dir, paths
        self.links = {}
        self.tasks = []  # asyncio keeps only weak references to running tasks
        self.conns = {}  # conn_id -> the Link it came on

    async def run(self):
        try:
            while True:  # new sockets appear when a gateway (re)starts with more threads
                for name in sorted(os.listdir(self.link_dir)) if os.path.isdir(self.link_dir) else []:
                    m = SOCKET_RE.match(name)
                    if m and int(m.group(1)) not in self.links:
                        link = Link(self, int(m.group(1)), os.path.join(self.link_dir, name))
                        self.links[link.index] = link
                        self.tasks.append(asyncio.get_running_loop().create_task(link.run()))
                await asyncio.sleep(0.2)
        finally:
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def on_link_ready(self, link, welcome):
        log(f"link {link.index}: welcome from gateway {welcome.gateway_id} "
            f"(link {welcome.link_index} of {welcome.link_count}, credit window {welcome.credit_window})")
        if all(l.ready for l in self.links.values()):
            log(f"ready: {len(self.links)} link(s) registered")

    def forget_link(self, link):
        for conn_id in [c for c, l in self.conns.items() if l is link]:
            del self.conns[conn_id]


def log(line):
    print(f"python-worker: {line}", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--link-dir", default=os.environ.get("FRAMEGATE_LINK_DIR", "/tmp/framegate"))
    parser.add_argument("--id", default=f"py-{os.getpid()}")
    parser.add_argument("--path", action="append", help="URL path to serve (repeatable; default /echo)")
    args = parser.parse_args()
    worker = Worker(args.id, args.link_dir, args.path or ["/echo"])
    loop = asyncio.new_event_loop()
    task = loop.create_task(worker.run())
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        loop.run_until_complete(task)
    except asyncio.CancelledError:
        pass
    log("stopped")


if __name__ == "__main__":
    main()
