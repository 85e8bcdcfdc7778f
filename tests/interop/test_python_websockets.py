"""Interoperability tests: Python `websockets` (Debian python3-websockets 10.4,
asyncio API `websockets.connect`) against the real framegate-gateway --echo.

Run (from anywhere):
    cd tests/interop && FRAMEGATE_GATEWAY_BIN=../../build/bin/framegate-gateway \
        PYTHONPATH=../integration/support /usr/bin/python3 -B -m unittest -v test_python_websockets

Each test class starts its own gateway on port 0 (the real port is read from the
stderr line `listening on HOST:PORT`) and stops it by PID with SIGTERM at the end,
asserting exit code 0. Every wait is bounded, so a hung gateway fails a test
instead of hanging it.
"""

import asyncio
import functools
import os
import unittest

import websockets
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from framegate_harness import LISTEN_RE, Process

HERE = os.path.dirname(os.path.abspath(__file__))
GATEWAY_BIN = os.environ.get("FRAMEGATE_GATEWAY_BIN") or os.path.join(
    HERE, "..", "..", "build", "bin", "framegate-gateway"
)

MAX_MESSAGE = 1048576  # gateway's default --max-message-size
SIZES = [0, 1, 125, 126, 65535, 65536, MAX_MESSAGE]
STARTUP_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
WAIT = 5.0  # any single wait for a frame / event
WAIT_AFTER_TIMEOUT = 2.0  # once a wait timed out the gateway is suspect: fail faster
_timed_out = False


def wait_s():
    return WAIT_AFTER_TIMEOUT if _timed_out else WAIT
TEST_TIMEOUT = 20.0  # whole test


class Gateway(Process):
    """One framegate-gateway process, started on 127.0.0.1:0."""

    def __init__(self, extra_args=()):
        if not os.path.exists(GATEWAY_BIN):
            raise RuntimeError(f"gateway binary not found: {GATEWAY_BIN} (set FRAMEGATE_GATEWAY_BIN)")
        super().__init__([GATEWAY_BIN, "--echo", "--listen", "127.0.0.1:0", "--threads", "2", *extra_args],
                         name="gateway", ready_pattern=LISTEN_RE)
        self.port = int(self.start(STARTUP_TIMEOUT).group(1))
        self.uri = f"ws://127.0.0.1:{self.port}/"


def bounded(seconds=TEST_TIMEOUT):
    """Fail (instead of hang) an async test that runs longer than `seconds`."""

    def deco(fn):
        @functools.wraps(fn)
        async def wrapper(self, *args, **kwargs):
            try:
                return await asyncio.wait_for(fn(self, *args, **kwargs), seconds)
            except asyncio.TimeoutError:
                self.fail(f"test timed out after {seconds}s (gateway hung?)")

        return wrapper

    return deco


@functools.lru_cache(maxsize=None)
def ascii_text(n):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?-_"
    return "".join(alphabet[(i * 7 + (i >> 8)) % len(alphabet)] for i in range(n))


@functools.lru_cache(maxsize=None)
def binary_data(n, seed=12345):
    """Deterministic pseudo-random bytes (xorshift32), starting 0x00 and ending 0xff."""
    out = bytearray(n)
    x = (seed & 0xFFFFFFFF) or 1
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    if n >= 2:
        out[0], out[-1] = 0x00, 0xFF
    return bytes(out)


class GatewayTestCase(unittest.IsolatedAsyncioTestCase):
    """Starts one gateway per test class; stops it (and checks exit 0) afterwards."""

    gateway_args = ()

    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(cls.gateway_args)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.stop_and_check(0, STOP_TIMEOUT)

    async def asyncSetUp(self):
        self.conns = []
        # IsolatedAsyncioTestCase runs the loop in debug mode; building 1 MiB payloads is not "slow I/O".
        asyncio.get_running_loop().slow_callback_duration = 2.0

    async def asyncTearDown(self):
        for ws in self.conns:
            if not ws.closed:
                ws.transport.abort()
                try:
                    await self.wait(ws.wait_closed(), "the connection to close")
                except asyncio.TimeoutError:
                    pass

    async def connect(self, **kwargs):
        options = dict(
            open_timeout=WAIT,
            close_timeout=WAIT,
            ping_interval=None,  # only our own pings
            max_size=16 * MAX_MESSAGE,
            compression=None,
        )
        options.update(kwargs)
        ws = await websockets.connect(self.gateway.uri, **options)
        self.conns.append(ws)
        return ws

    async def wait(self, aw, what):
        """Await `aw` for at most wait_s() seconds; a timeout fails the test."""
        global _timed_out
        timeout = wait_s()
        try:
            return await asyncio.wait_for(aw, timeout)
        except asyncio.TimeoutError:
            _timed_out = True
            self.fail(f"timed out after {timeout}s waiting for {what}")

    async def recv(self, ws):
        return await self.wait(ws.recv(), "an echoed message")

    async def close(self, ws, code=1000, reason=""):
        await self.wait(ws.close(code, reason), "the close handshake")
        self.assertTrue(ws.closed)
        self.assertIsNotNone(ws.close_rcvd, "the gateway must answer with a close frame")
        self.assertEqual(ws.close_code, code)


class EchoTest(GatewayTestCase):
    @bounded()
    async def test_text_sizes(self):
        ws = await self.connect()
        for size in SIZES:
            with self.subTest(size=size):
                text = ascii_text(size)
                await ws.send(text)
                got = await self.recv(ws)
                self.assertIsInstance(got, str, "echo of a text message must be text")
                self.assertEqual(len(got), size)
                self.assertEqual(got.encode("utf-8"), text.encode("utf-8"))
        await self.close(ws)

    @bounded()
    async def test_binary_sizes(self):
        ws = await self.connect()
        for size in SIZES:
            with self.subTest(size=size):
                data = binary_data(size, size + 1)
                await ws.send(data)
                got = await self.recv(ws)
                self.assertIsInstance(got, bytes, "echo of a binary message must be binary")
                self.assertEqual(len(got), size)
                self.assertEqual(got, data)
        await self.close(ws)

    @bounded()
    async def test_sizes_each_on_fresh_connection(self):
        for size in SIZES:
            with self.subTest(size=size):
                ws = await self.connect()
                text, data = ascii_text(size), binary_data(size, 7 * size + 3)
                await ws.send(data)
                await ws.send(text)
                got_bin = await self.recv(ws)
                got_text = await self.recv(ws)
                self.assertIsInstance(got_bin, bytes)
                self.assertEqual(got_bin, data)
                self.assertIsInstance(got_text, str)
                self.assertEqual(got_text, text)
                await self.close(ws)

    @bounded()
    async def test_unicode_text_round_trips(self):
        ws = await self.connect()
        texts = [
            "héllo wörld — ünïcödé",
            "€ 日本語テキスト 한국어 العربية",
            "𝄞 🎉🚀 astral plane 😀👍🏽",
            "😀" * (MAX_MESSAGE // 4),  # exactly 1 MiB of 4-byte UTF-8 sequences
        ]
        for text in texts:
            with self.subTest(utf8_bytes=len(text.encode("utf-8"))):
                await ws.send(text)
                got = await self.recv(ws)
                self.assertIsInstance(got, str)
                self.assertEqual(got, text)
        await self.close(ws)

    @bounded()
    async def test_fragmented_messages_echo_as_one(self):
        # websockets sends an iterable as one fragmented message.
        ws = await self.connect()
        parts = ["ab", "€ ", "日本", "😀!"]
        await ws.send(parts)
        got = await self.recv(ws)
        self.assertIsInstance(got, str)
        self.assertEqual(got, "".join(parts))
        chunks = [binary_data(1, 1), binary_data(126, 2), binary_data(65536, 3)]
        await ws.send(chunks)
        got = await self.recv(ws)
        self.assertIsInstance(got, bytes)
        self.assertEqual(got, b"".join(chunks))
        await self.close(ws)

    @bounded()
    async def test_many_messages_in_order(self):
        ws = await self.connect()
        sent = []
        for i in range(1000):
            msg = binary_data(i % 300, i + 1) + f"#{i}".encode() if i % 3 == 0 else f"message {i} {ascii_text(i % 200)}"
            sent.append(msg)
        for m in sent:  # back to back: no waiting for echoes in between
            await ws.send(m)
        for i, expected in enumerate(sent):
            got = await self.recv(ws)
            self.assertEqual(type(got), type(expected), f"message {i} type")
            self.assertEqual(got, expected, f"message {i}")
        await self.close(ws)

    @bounded()
    async def test_ping_pong_same_payload(self):
        ws = await self.connect()
        for payload in [b"framegate-ping", binary_data(125, 9), b"", "text-ping"]:
            with self.subTest(payload=payload[:16]):
                waiter = await ws.ping(payload)
                # The waiter only resolves for a pong carrying exactly this payload.
                latency = await self.wait(waiter, "the pong")
                self.assertIsInstance(latency, float)
                self.assertEqual(ws.pings, {}, "pong acknowledged exactly our ping")
        # A ping between data messages does not disturb the data stream.
        await ws.send("before")
        waiter = await ws.ping(b"mid")
        await ws.send("after")
        await self.wait(waiter, "the pong")
        self.assertEqual(await self.recv(ws), "before")
        self.assertEqual(await self.recv(ws), "after")
        await self.close(ws)

    @bounded()
    async def test_clean_close_1000(self):
        ws = await self.connect()
        await ws.send("hello")
        self.assertEqual(await self.recv(ws), "hello")
        await self.wait(ws.close(1000, "normal closure, bye"), "the close handshake")
        self.assertIsNotNone(ws.close_rcvd, "gateway must answer with a close frame")
        self.assertEqual(ws.close_code, 1000)
        self.assertEqual(ws.close_sent.code, 1000)

    @bounded()
    async def test_close_code_echoed(self):
        ws = await self.connect()
        await self.wait(ws.close(4321, "app-defined"), "the close handshake")
        self.assertEqual(ws.close_code, 4321)

    @bounded()
    async def test_oversize_message_closed_1009(self):
        for msg in (binary_data(MAX_MESSAGE + 1, 5), ascii_text(MAX_MESSAGE + 1)):
            with self.subTest(kind=type(msg).__name__):
                ws = await self.connect()
                try:
                    await self.wait(ws.send(msg), "sending the oversize message")
                except ConnectionClosed:
                    pass  # the gateway may close while we are still sending
                with self.assertRaises(ConnectionClosed):
                    got = await self.recv(ws)
                    self.fail(f"oversize message was echoed ({len(got)} units)")
                await self.wait(ws.wait_closed(), "the connection to close")
                self.assertEqual(ws.close_code, 1009)
        # The gateway still serves new connections.
        ws = await self.connect()
        await ws.send("alive")
        self.assertEqual(await self.recv(ws), "alive")
        await self.close(ws)

    @unittest.skip("python websockets cannot send invalid UTF-8 in a text frame through its public API")
    async def test_invalid_utf8_closed_1007(self):
        pass  # pragma: no cover


def json_text(n):
    """Compressible JSON-like text of exactly n bytes."""
    items, i = [], 0
    while sum(map(len, items)) < n:
        items.append(f'{{"id":{i},"user":"u{i % 13}","text":"hello there","ts":{1700000000 + i}}},')
        i += 1
    return "".join(items)[:n]


class DeflateTest(GatewayTestCase):
    """permessage-deflate (RFC 7692) with websockets' compression on: it compresses every message it sends."""

    gateway_args = ("--deflate", "--deflate-threshold", "0")
    # What the gateway answers websockets' default offer (permessage-deflate; client_max_window_bits).
    expected_response = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

    async def connect_deflate(self, **kwargs):
        return await self.connect(compression="deflate", **kwargs)

    @bounded()
    async def test_negotiated(self):
        ws = await self.connect_deflate()
        self.assertEqual(ws.response_headers.get("Sec-WebSocket-Extensions"), self.expected_response)
        self.assertEqual([e.name for e in ws.extensions], ["permessage-deflate"])
        await self.close(ws)

    @bounded()
    async def test_text_and_binary_sizes(self):
        ws = await self.connect_deflate()
        for size in SIZES:
            with self.subTest(size=size):
                text, data = json_text(size), binary_data(size, size + 1)
                await ws.send(text)
                await ws.send(data)
                self.assertEqual(await self.recv(ws), text)
                self.assertEqual(await self.recv(ws), data)
        await self.close(ws)

    @bounded()
    async def test_many_similar_messages_keep_contexts_in_step(self):
        ws = await self.connect_deflate()
        sent = [json_text(100 + (i % 23) * 47) for i in range(300)]
        for m in sent:
            await ws.send(m)
        for i, m in enumerate(sent):
            self.assertEqual(await self.recv(ws), m, f"message {i}")
        await self.close(ws)

    @bounded()
    async def test_incompressible_message_of_the_limit_is_echoed(self):
        # Compressed, 1 MiB of random bytes grows a little on the wire: the limit is on the inflated size.
        ws = await self.connect_deflate()
        data = os.urandom(MAX_MESSAGE)
        await ws.send(data)
        self.assertEqual(await self.recv(ws), data)
        await self.close(ws)

    @bounded()
    async def test_inflating_past_the_limit_closes_1009(self):
        ws = await self.connect_deflate()
        try:
            await self.wait(ws.send("a" * (MAX_MESSAGE + 1)), "sending the oversize message")
        except ConnectionClosed:
            pass
        with self.assertRaises(ConnectionClosed):
            await self.recv(ws)
        await self.wait(ws.wait_closed(), "the connection to close")
        self.assertEqual(ws.close_code, 1009)

    @bounded()
    async def test_offer_with_every_parameter(self):
        factory = ClientPerMessageDeflateFactory(
            server_no_context_takeover=True, client_no_context_takeover=True,
            server_max_window_bits=10, client_max_window_bits=9)
        ws = await self.connect(extensions=[factory], compression=None)
        header = ws.response_headers.get("Sec-WebSocket-Extensions")
        self.assertIn("server_no_context_takeover", header)
        self.assertIn("server_max_window_bits=10", header)
        for size in (10, 5000, 70000):
            await ws.send(json_text(size))
            self.assertEqual(await self.recv(ws), json_text(size))
        await self.close(ws)


class DeflateTakeoverTest(DeflateTest):
    """--deflate-takeover both: websockets keeps both contexts."""

    gateway_args = ("--deflate", "--deflate-threshold", "0", "--deflate-takeover", "both")
    expected_response = "permessage-deflate; client_max_window_bits=15"


class DeflateCappedTakeoverTest(DeflateTest):
    """--deflate-takeover both --deflate-window-bits 10: the windows are capped through the response."""

    gateway_args = ("--deflate", "--deflate-threshold", "0", "--deflate-takeover", "both",
                    "--deflate-window-bits", "10")
    expected_response = "permessage-deflate; server_max_window_bits=10; client_max_window_bits=10"


class SubprotocolTest(GatewayTestCase):
    gateway_args = ("--subprotocol", "chat,superchat")

    @bounded()
    async def test_superchat_selected(self):
        ws = await self.connect(subprotocols=["superchat"])
        self.assertEqual(ws.subprotocol, "superchat")
        await ws.send("proto")
        self.assertEqual(await self.recv(ws), "proto")
        await self.close(ws)

    @bounded()
    async def test_first_supported_offered_selected(self):
        ws = await self.connect(subprotocols=["unknown", "chat"])
        self.assertEqual(ws.subprotocol, "chat")
        await self.close(ws)

    @bounded()
    async def test_no_offer_no_protocol(self):
        ws = await self.connect()
        self.assertIsNone(ws.subprotocol)
        await self.close(ws)


if __name__ == "__main__":
    unittest.main(verbosity=2)
