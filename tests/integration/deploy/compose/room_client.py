"""A /rooms client for the live compose test: the harness's raw WebSocket
client, read by a thread of its own so that the gateway's pings are
answered while the test waits on Docker (scaling, restarts), and so that
a close, whenever it comes, is seen."""

from __future__ import annotations

import json
import re
import threading
import time

from framegate_harness import OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, HarnessError, WsClient, WsTimeout


# Redis numbers room messages (history is on by default): the offset comes
# last. Messages are kept without it, so that a publish's expected text
# matches; the offsets are kept apart.
OFFSET = re.compile(r',"offset":(\d+)\}$')


class RoomClient:
    def __init__(self, name: str, host: str, port: int, path: str = "/rooms") -> None:
        self.name = name
        self.ws = WsClient(host, port, timeout=10).connect()
        self.ws.handshake(path)
        self.messages: list[str] = []  # as received, without their offset
        self.offsets: list[int | None] = []  # of each message (None: not numbered)
        self.closed: str | None = None  # why the connection ended, if it did
        self.changed = threading.Condition()
        self.send_lock = threading.Lock()
        self.stopping = False
        self.reader = threading.Thread(target=self.read, name=f"room-client-{name}", daemon=True)
        self.reader.start()

    def read(self) -> None:
        while not self.stopping:
            try:
                frame = self.ws.recv_frame(timeout=0.5)
            except WsTimeout:
                continue
            except (HarnessError, OSError) as exc:
                self.ended(f"{type(exc).__name__}: {exc}")
                return
            if frame.opcode == OP_PING:
                self.send(OP_PONG, frame.payload)
            elif frame.opcode == OP_CLOSE:
                self.ended(f"close frame, code {frame.close_code}")
                return
            elif frame.opcode == OP_TEXT:
                text = frame.payload.decode()
                numbered = OFFSET.search(text)
                with self.changed:
                    self.messages.append(OFFSET.sub("}", text) if numbered else text)
                    self.offsets.append(int(numbered.group(1)) if numbered else None)
                    self.changed.notify_all()

    def ended(self, why: str) -> None:
        with self.changed:
            if not self.stopping:
                self.closed = why
            self.changed.notify_all()

    def send(self, opcode: int, payload: bytes) -> None:
        with self.send_lock:
            self.ws.send_frame(opcode, payload)

    def request(self, **fields) -> None:
        self.send(OP_TEXT, json.dumps(fields).encode())

    def join(self, room: str) -> None:
        self.request(op="join", room=room)

    def publish(self, room: str, data) -> str:
        """Publish `data`; returns the message every member should receive."""
        raw = json.dumps(data, separators=(",", ":"))
        self.send(OP_TEXT, f'{{"op":"publish","room":{json.dumps(room)},"data":{raw}}}'.encode())
        return f'{{"room":{json.dumps(room)},"data":{raw}}}'

    def count(self, message: str) -> int:
        with self.changed:
            return self.messages.count(message)

    def wait_for(self, accept, timeout: float) -> bool:
        """Whether a message `accept` returns true for arrives within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not any(accept(m) for m in self.messages):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.closed:
                    return False
                self.changed.wait(remaining)
            return True

    def close(self) -> None:
        self.stopping = True
        try:
            with self.send_lock:
                self.ws.send_close(1000)
        except (HarnessError, OSError):
            pass
        self.reader.join(5)
        self.ws.close()
