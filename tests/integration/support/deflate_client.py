"""permessage-deflate (RFC 7692) for the raw conformance client, stdlib only.

Contents:
  * parse_extensions -- the Sec-WebSocket-Extensions grammar of RFC 6455 9.1,
    strictly, so that a malformed response fails the test.
  * Deflate -- the client side of a negotiated connection: compresses what the
    client sends and inflates what the server sends, with the window sizes and
    context takeover the server's response set (RFC 7692 7.1), as a strict
    client would (it rejects responses RFC 7692 7 forbids).
  * DeflateTestCase -- GatewayTestCase with a gateway run with --deflate and
    assertions on compressed echoes.
  * Payloads of the kinds Autobahn 12 sends (JSON, text, HTML, an image,
    incompressible bytes), of any size, deterministic.
"""

from __future__ import annotations

import random
import re
import zlib
from typing import Sequence

from framegate_harness import (
    OP_CONT, OP_TEXT, RSV1, Frame, GatewayTestCase, WsClient, build_frame, describe_bytes, first_difference,
)

TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.1: removed by the sender, appended by the receiver
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class NegotiationError(AssertionError):
    """The server's extension response is not one RFC 7692 allows for the offer."""


def parse_extensions(value: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """[(name, [(param, value or None), ...]), ...] of one header value; raises on bad syntax."""
    out = []
    for element in value.split(","):
        element = element.strip(" \t")
        if not element:
            continue
        name, *params = [part.strip(" \t") for part in element.split(";")]
        if not TOKEN.fullmatch(name):
            raise NegotiationError(f"bad extension name {name!r} in {value!r}")
        parsed = []
        for param in params:
            key, sep, val = (p.strip(" \t") for p in param.partition("="))
            if val.startswith('"') and val.endswith('"') and len(val) >= 2:
                val = val[1:-1]
            if not TOKEN.fullmatch(key) or (sep and not TOKEN.fullmatch(val)):
                raise NegotiationError(f"bad parameter {param!r} in {value!r}")
            parsed.append((key, val if sep else None))
        out.append((name, parsed))
    return out


def zlib_bits(bits: int) -> int:
    """zlib cannot compress with a 256-byte window: 8 is used as 9 (RFC 7692 says nothing; every zlib user does)."""
    return max(bits, 9)


class Deflate:
    """One connection's permessage-deflate, from the offer sent and the response received."""

    def __init__(self, offer: str, response: str | None):
        if not response:
            raise NegotiationError(f"offer {offer!r} was declined (no Sec-WebSocket-Extensions)")
        extensions = parse_extensions(response)
        if len(extensions) != 1 or extensions[0][0] != "permessage-deflate":
            raise NegotiationError(f"response {response!r} is not exactly one permessage-deflate")
        params = extensions[0][1]
        names = [p for p, _ in params]
        if len(set(names)) != len(names):
            raise NegotiationError(f"duplicate parameter in {response!r}")
        values = dict(params)
        offered = [dict(p) for n, p in parse_extensions(offer) if n == "permessage-deflate"]
        self.response = response
        self.server_no_context_takeover = "server_no_context_takeover" in values
        self.client_no_context_takeover = "client_no_context_takeover" in values
        self.server_bits = self._bits(values, "server_max_window_bits") or 15
        self.client_bits = self._bits(values, "client_max_window_bits") or 15
        for key in values:
            if key not in ("server_no_context_takeover", "client_no_context_takeover",
                           "server_max_window_bits", "client_max_window_bits"):
                raise NegotiationError(f"unknown parameter {key!r} in {response!r}")
        # The response answers one of the offers (RFC 7692 7): find one it fits.
        if not any(self._answers(o, values) for o in offered):
            raise NegotiationError(f"response {response!r} answers none of the offers in {offer!r}")
        self.compressor = None
        self.decompressor = None

    @staticmethod
    def _bits(values: dict, key: str) -> int | None:
        if key not in values:
            return None
        value = values[key]
        if value is None or not re.fullmatch(r"8|9|1[0-5]", value):
            raise NegotiationError(f"{key} must have a value 8..15 in a response, got {value!r}")
        return int(value)

    @staticmethod
    def _answers(offer: dict, response: dict) -> bool:
        # 7.1.1.1: an offered server_no_context_takeover must be in the response.
        if "server_no_context_takeover" in offer and "server_no_context_takeover" not in response:
            return False
        # 7.1.2.1: an offered server_max_window_bits is answered, same or smaller.
        if "server_max_window_bits" in offer:
            if "server_max_window_bits" not in response:
                return False
            if int(response["server_max_window_bits"]) > int(offer["server_max_window_bits"]):
                return False
        # 7.1.2.2: client_max_window_bits only if offered, and not above an offered value.
        if "client_max_window_bits" in response:
            if "client_max_window_bits" not in offer:
                return False
            limit = offer["client_max_window_bits"]
            if limit is not None and int(response["client_max_window_bits"]) > int(limit):
                return False
        return True

    # -- client to server -------------------------------------------------

    def compress(self, payload: bytes) -> bytes:
        """The payload of a compressed message (7.2.1), with the client's negotiated context rules."""
        if self.compressor is None or self.client_no_context_takeover:
            self.compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib_bits(self.client_bits))
        data = self.compressor.compress(payload) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(TAIL)
        return data[:-4]

    def frame_list(self, opcode: int, payload: bytes, fragments: int = 1) -> list[bytes]:
        """A compressed message as `fragments` frames (RSV1 on the first only, RFC 7692 6)."""
        data = self.compress(payload)
        step = max(1, -(-len(data) // fragments))
        parts = [data[i:i + step] for i in range(0, len(data), step)] or [b""]
        while len(parts) < fragments:
            parts.append(b"")
        return [build_frame(opcode if i == 0 else OP_CONT, part, fin=i == len(parts) - 1, rsv=RSV1 if i == 0 else 0)
                for i, part in enumerate(parts)]

    def frames(self, opcode: int, payload: bytes, fragments: int = 1) -> bytes:
        return b"".join(self.frame_list(opcode, payload, fragments))

    # -- server to client -------------------------------------------------

    def inflate(self, payload: bytes) -> bytes:
        if self.decompressor is None or self.server_no_context_takeover:
            self.decompressor = zlib.decompressobj(-self.server_bits)
        return self.decompressor.decompress(payload + TAIL)


class DeflateTestCase(GatewayTestCase):
    """A gateway with --deflate; every message is compressed unless a class sets a threshold."""

    gateway_args: Sequence[str] | None = ("--deflate", "--deflate-threshold", "0")
    offer = "permessage-deflate; client_max_window_bits"

    def open_deflate_client(self, offer: str | None = None, gateway=None) -> tuple[WsClient, Deflate]:
        offer = offer or self.offer
        client = self.connect(gateway)
        response = client.handshake(headers={"Sec-WebSocket-Extensions": offer})
        return client, Deflate(offer, response.header("Sec-WebSocket-Extensions"))

    def expect_message(self, client: WsClient, deflate: Deflate, what: str) -> tuple[Frame, bytes, bool]:
        """The next frame, a whole message from the server: (frame, payload inflated, was compressed)."""
        frame = self.receive_frame(client, what)
        self.assertIn(frame.rsv, (0, RSV1), f"only RSV1 is defined by permessage-deflate: {frame.describe()}")
        self.assertTrue(frame.fin, f"expected an unfragmented {what}, got {frame.describe()}")
        compressed = frame.rsv == RSV1
        if compressed:
            self.assertIn(frame.opcode, (OP_TEXT, 2), f"RSV1 on a control frame (RFC 7692 6): {frame.describe()}")
            try:
                return frame, deflate.inflate(frame.payload), True
            except zlib.error as exc:
                self.fail(f"{what}: the server's compressed payload does not inflate ({exc}): {frame.describe()}")
        return frame, frame.payload, False

    def assert_deflate_echo(self, client: WsClient, deflate: Deflate, opcode: int, payload: bytes,
                            compressed: bool | None = None) -> bool:
        """The echo of `payload` arrived, compressed if `compressed` is True, plain if False; returns which."""
        what = f"echo of a {len(payload)}-byte message"
        frame, data, was_compressed = self.expect_message(client, deflate, what)
        self.assertEqual(frame.opcode, opcode, f"{what}: {frame.describe()}")
        if data != payload:
            self.fail(f"{what}: got {describe_bytes(data)} (compressed={was_compressed}), expected "
                      f"{describe_bytes(payload)}; first difference at {first_difference(data, payload)}")
        if compressed is not None:
            self.assertEqual(was_compressed, compressed, f"{what}: RSV1 is {int(was_compressed)}")
        return was_compressed


# -- payloads ----------------------------------------------------------------

def fit(raw: bytes, size: int) -> bytes:
    """`raw` cut to `size` bytes of valid UTF-8 (a cut code point becomes dots)."""
    raw = (raw * (size // max(1, len(raw)) + 1))[:size]
    complete = raw.decode("utf-8", "ignore").encode("utf-8")
    return complete + b"." * (size - len(complete))


def json_text(size: int, seed: int = 12) -> bytes:
    rng = random.Random(seed)
    items = [f'{{"id":{rng.randint(1, 99999)},"name":"user{rng.randint(1, 50)}","tags":["a","κόσμε"],'
             f'"score":{rng.random():.6f},"active":{str(rng.random() > 0.5).lower()}}}' for _ in range(size // 60 + 2)]
    return fit(("[" + ",".join(items) + "]").encode("utf-8"), size)


def human_text(size: int) -> bytes:
    words = ("the quick brown fox jumps over the lazy dog while a gateway compresses every message once; "
             "Ein Wörterbuch für Übersetzungen, 日本語のテキスト, ελληνικά γράμματα, emoji 🎉. ").encode("utf-8")
    return fit(words, size)


def html_text(size: int) -> bytes:
    row = '<tr class="row"><td><a href="/item/{0}">Item {0}</a></td><td>{1}</td></tr>\n'
    rng = random.Random(7)
    body = "".join(row.format(i, rng.choice(("open", "closed", "pending"))) for i in range(size // 60 + 2))
    return fit(("<html><body><table>\n" + body + "</table></body></html>").encode("ascii"), size)


def image_like(size: int) -> bytes:
    """Runs and gradients, like an uncompressed bitmap (Autobahn 12.2 uses a BMP)."""
    rng = random.Random(99)
    out = bytearray()
    while len(out) < size:
        value = rng.randrange(256)
        out += bytes((value + i) % 256 for i in range(rng.randint(4, 64)))
    return bytes(out[:size])


def random_bytes(size: int) -> bytes:
    """Incompressible, like an already compressed PDF stream (Autobahn 12.5)."""
    return random.Random(size).randbytes(size)


def vm_hwm_kib(pid: int) -> int:
    """Peak resident memory of a process (VmHWM), in KiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for pid {pid}")


def reset_hwm(pid: int) -> bool:
    """Reset the peak RSS counter (Linux: write 5 to clear_refs); False where not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


__all__ = ["Deflate", "DeflateTestCase", "NegotiationError", "TAIL", "html_text", "human_text", "image_like",
           "json_text", "parse_extensions", "random_bytes", "reset_hwm", "vm_hwm_kib", "zlib_bits"]
