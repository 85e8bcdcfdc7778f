"""Reusable stdlib-only helpers for framegate integration tests.

Contents:
  * Process / GatewayProcess -- start a server binary as a subprocess, wait
    (bounded) for its readiness line on stderr, drain its output in threads
    (so the pipes never fill), keep the last lines for failure messages and
    stop it by PID (SIGTERM, then SIGKILL after a bound); wait_for_up() for
    a `framegate up` cluster; spawn() to start one without a ready pattern;
    run_checked() for a command run to its end.
  * WsClient -- a raw RFC 6455 client over a plain TCP socket: handshake with
    custom headers or raw bytes, hand-built frames (any opcode, fin, rsv bits,
    mask, 7/16/64-bit length forms, lying lengths), whole or chunked sends,
    frame reads with timeouts, close-frame and TCP-close detection.
  * GatewayTestCase -- a unittest base class that runs one gateway per class
    and offers assertions shaped like Autobahn|Testsuite verdicts.

Only Python 3.11 standard library modules are used.
"""

from __future__ import annotations

import atexit
import base64
import collections
import dataclasses
import hashlib
import json
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time
import unittest
from typing import Iterable, Mapping, Sequence

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONT = 0x0
OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
OP_PONG = 0xA

RSV1 = 0x4
RSV2 = 0x2
RSV3 = 0x1

OPCODE_NAMES = {
    OP_CONT: "continuation",
    OP_TEXT: "text",
    OP_BINARY: "binary",
    OP_CLOSE: "close",
    OP_PING: "ping",
    OP_PONG: "pong",
}

LISTEN_RE = re.compile(r"listening on [^ ]+:(\d+)")

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_GATEWAY_BIN = os.path.join(REPO_ROOT, "build", "bin", "framegate-gateway")
DEFAULT_WORKER_BIN = os.path.join(REPO_ROOT, "build", "bin", "framegate-worker")

# What the "echo" server under test is: the gateway's own diagnostic echo
# ("echo", the default) or the /echo app served by real worker processes
# behind the gateway ("workers"): the same suite must pass against both.
TARGET = os.environ.get("FRAMEGATE_CONFORMANCE_TARGET", "echo")
DEFAULT_PATH = "/echo" if TARGET == "workers" else "/"
TARGET_WORKERS = 2
REGISTERED_RE = re.compile(r"worker '[^']*' \(pid \d+.*registered")
UP_LISTEN_RE = re.compile(r"gateway listening on ws://[^:]+:(\d+)/")  # framegate up's line

MAX_SERVER_FRAME = 64 * 1024 * 1024  # sanity cap on what a server may send us


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class HarnessError(Exception):
    """Base class of harness errors."""


class ProcessError(HarnessError):
    """A process did not start, become ready, or exit as expected."""


class WsTimeout(HarnessError):
    """Nothing (or not enough) arrived before the deadline."""


class WsConnectionClosed(HarnessError):
    """The peer closed (or reset) the TCP connection."""

    def __init__(self, message: str, reset: bool = False, pending: bytes = b""):
        super().__init__(message)
        self.reset = reset
        self.pending = pending


class HandshakeError(HarnessError):
    """The opening handshake did not succeed."""

    def __init__(self, message: str, response: "HttpResponse | None" = None):
        super().__init__(message)
        self.response = response


class ServerProtocolError(HarnessError):
    """The server sent something that is not a valid RFC 6455 server frame."""


# ---------------------------------------------------------------------------
# Process management
# ---------------------------------------------------------------------------

_LIVE_PROCESSES: "set[Process]" = set()


def _kill_leftovers() -> None:
    """Safety net: kill (by PID) every harness process still running at exit."""
    for proc in list(_LIVE_PROCESSES):
        proc.kill()


atexit.register(_kill_leftovers)


def _clean_env(extra: Mapping[str, str] | None, strip_prefixes: Sequence[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if not any(k.startswith(p) for p in strip_prefixes)}
    if extra:
        env.update(extra)
    return env


class Process:
    """A child process whose output is drained and whose readiness is awaited.

    `ready_pattern` (a compiled regex or string) is searched in each stderr
    line (or stdout line when ready_stream="stdout"); start() returns the
    first match.  Without a pattern start() returns as soon as the process is
    spawned.
    """

    def __init__(
        self,
        argv: Sequence[str],
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        strip_env_prefixes: Sequence[str] = (),
        ready_pattern: "re.Pattern[str] | str | None" = None,
        ready_stream: str = "stderr",
        tail_lines: int = 200,
        cwd: str | None = None,
    ):
        self.argv = [str(a) for a in argv]
        self.name = name or os.path.basename(self.argv[0])
        self.env = _clean_env(env, strip_env_prefixes)
        self.ready_pattern = re.compile(ready_pattern) if isinstance(ready_pattern, str) else ready_pattern
        self.ready_stream = ready_stream
        self.cwd = cwd
        self.popen: subprocess.Popen | None = None
        self.ready_match: re.Match | None = None
        self.killed = False
        self._tail: collections.deque = collections.deque(maxlen=tail_lines)
        # Notified on each captured line and at each stream's end (wait_for).
        self._tail_lock = threading.Condition()
        self._ready = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- lifecycle ---------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "re.Match | None":
        """Spawn the process and wait (bounded) until it is ready."""
        if self.popen is not None:
            raise ProcessError(f"{self.name} already started")
        try:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
            )
        except OSError as exc:
            raise ProcessError(f"cannot start {self.argv!r}: {exc}") from exc
        _LIVE_PROCESSES.add(self)
        self._start_reader(self.popen.stdout, "stdout")
        self._start_reader(self.popen.stderr, "stderr")
        if self.ready_pattern is None:
            return None
        self._wait_ready(timeout)
        return self.ready_match

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if self.popen.poll() is not None:
                self._join_readers(1.0)
                if self._ready.is_set():
                    return
                raise ProcessError(
                    f"{self.name} exited with code {self.popen.returncode} before becoming ready"
                    f"\n{self.describe_tail()}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise ProcessError(
                    f"{self.name} printed no line matching {self.ready_pattern.pattern!r} "
                    f"within {timeout}s\n{self.describe_tail()}"
                )

    def _start_reader(self, stream, label: str) -> None:
        thread = threading.Thread(
            target=self._drain, args=(stream, label), name=f"{self.name}-{label}", daemon=True
        )
        thread.start()
        self._threads.append(thread)

    def _drain(self, stream, label: str) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self._tail_lock:
                self._tail.append(f"[{label}] {line}")
                self._tail_lock.notify_all()
            if self._matches_ready(line, label):
                self._ready.set()
        stream.close()
        with self._tail_lock:
            self._tail_lock.notify_all()

    def _matches_ready(self, line: str, label: str) -> bool:
        if self._ready.is_set() or self.ready_pattern is None or label != self.ready_stream:
            return False
        match = self.ready_pattern.search(line)
        if match:
            self.ready_match = match
        return match is not None

    def _join_readers(self, timeout: float) -> None:
        for thread in self._threads:
            thread.join(timeout)

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def is_running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def send_signal(self, sig: int) -> None:
        """Send `sig` to the child by its PID (only while it runs)."""
        if self.is_running():
            os.kill(self.popen.pid, sig)

    def wait(self, timeout: float) -> int:
        """Wait for exit; raises ProcessError if it is still running after `timeout`."""
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            raise ProcessError(f"{self.name} (pid {self.pid}) still running after {timeout}s") from exc
        self._finish()
        return code

    def stop(self, timeout: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
        """Stop by PID: `sig` (SIGTERM), then SIGKILL if still alive after `timeout`.

        Returns the exit code (negative for death by signal, per subprocess);
        `self.killed` tells whether SIGKILL was needed.
        """
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            self.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._finish()
        return self.popen.returncode

    def kill(self) -> None:
        """SIGKILL by PID, then reap."""
        if self.popen is not None and self.popen.poll() is None:
            self.killed = True
            os.kill(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
        self._finish()

    def _finish(self) -> None:
        _LIVE_PROCESSES.discard(self)
        self._join_readers(2.0)

    def stop_and_check(self, expected_code: int = 0, timeout: float = 10.0) -> int | None:
        """stop() and raise ProcessError unless it exited with `expected_code` on its own."""
        code = self.stop(timeout)
        if self.killed:
            raise ProcessError(f"{self.name} did not exit within {timeout}s of SIGTERM; "
                               f"killed\n{self.describe_tail()}")
        if code != expected_code:
            raise ProcessError(f"{self.name} exited with {code}, expected {expected_code}"
                               f"\n{self.describe_tail()}")
        return code

    # -- output ------------------------------------------------------------

    def wait_for(self, pattern: "re.Pattern[str] | str", count: int = 1,
                 timeout: float = 10.0) -> "list[re.Match]":
        """The first `count` captured lines (either stream) matching `pattern`, awaited (bounded).

        Unlike the ready pattern of start(), for what comes later (workers
        registering) or several times.  Raises ProcessError if the process
        ends (its output all read) or `timeout` passes first; the process is
        left as it is (stopping it is the caller's).
        """
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        with self._tail_lock:
            while True:
                matches = [match for match in map(regex.search, self._tail) if match]
                if len(matches) >= count:
                    return matches[:count]
                if self.popen.poll() is not None and not any(t.is_alive() for t in self._threads):
                    reason = f"exited with code {self.popen.returncode}"
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    reason = f"timed out after {timeout}s"
                    break
                # Short waits: a reader thread is still alive when it notifies the end of its stream.
                self._tail_lock.wait(min(remaining, 0.05))
        raise ProcessError(f"{self.name} printed {len(matches)} of {count} line(s) matching {regex.pattern!r} "
                           f"and {reason}\n{self.describe_tail()}")

    def output_lines(self) -> list[str]:
        """The last captured lines, each prefixed with [stdout] or [stderr]."""
        with self._tail_lock:
            return list(self._tail)

    def describe_tail(self, count: int = 25) -> str:
        lines = self.output_lines()[-count:]
        header = f"--- last {len(lines)} output lines of {self.name} (pid {self.pid}) ---"
        return "\n".join([header, *lines, "--- end ---"])


def spawn(argv: Sequence[str], name: str | None = None, env: Mapping[str, str] | None = None) -> Process:
    """A started Process without a ready pattern (wait_for what it prints)."""
    process = Process(argv, name=name, env=env)
    process.start()
    return process


def run_checked(cmd: Sequence[str], timeout: float, **kwargs) -> str:
    """Runs `cmd` to its end (bounded); returns its stdout and stderr together.

    A non-zero exit raises AssertionError (a test failure, not an error) with
    the whole output.
    """
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          timeout=timeout, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}")
    return done.stdout


def wait_for_up(process: Process, workers: int, timeout: float) -> int:
    """The WebSocket port of `framegate up` run as `process`, once its gateway
    listens and `workers` workers registered, both within one `timeout`."""
    deadline = time.monotonic() + timeout
    port = int(process.wait_for(UP_LISTEN_RE, timeout=timeout)[0].group(1))
    process.wait_for(REGISTERED_RE, workers, max(0.0, deadline - time.monotonic()))
    return port


def gateway_binary() -> str:
    """Path of the gateway binary: $FRAMEGATE_GATEWAY_BIN or build/bin/framegate-gateway."""
    return os.environ.get("FRAMEGATE_GATEWAY_BIN") or DEFAULT_GATEWAY_BIN


class GatewayProcess(Process):
    """framegate-gateway on 127.0.0.1, port 0, in echo mode by default.

    FRAMEGATE_* variables of the caller's environment are not passed on (the
    gateway reads options from them); pass `env` to set some on purpose.
    """

    def __init__(
        self,
        extra_args: Sequence[str] = (),
        binary: str | None = None,
        echo: bool = True,
        threads: int = 1,
        host: str = "127.0.0.1",
        env: Mapping[str, str] | None = None,
        worker_args: Sequence[str] = (),
    ):
        argv = [binary or gateway_binary(), "--listen", f"{host}:0", "--threads", str(threads)]
        self.behind_workers = echo and TARGET == "workers"
        self.worker_args = list(worker_args)  # for the workers of TARGET "workers"
        self.link_dir: str | None = None
        self.workers: list[Process] = []
        if self.behind_workers:
            import tempfile
            self.link_dir = tempfile.mkdtemp(prefix="fg-conformance-")
            argv.extend(["--link-dir", self.link_dir])
        elif echo:
            argv.append("--echo")
        argv.extend(str(a) for a in extra_args)
        super().__init__(
            argv,
            name="framegate-gateway",
            env=env,
            strip_env_prefixes=("FRAMEGATE_",),
            ready_pattern=LISTEN_RE,
        )
        self.host = host

    def start(self, timeout: float = 10.0) -> "re.Match | None":
        match = super().start(timeout)
        if self.behind_workers:
            self._start_workers(timeout)
        return match

    def _start_workers(self, timeout: float) -> None:
        binary = os.environ.get("FRAMEGATE_WORKER_BIN") or DEFAULT_WORKER_BIN
        for i in range(1, TARGET_WORKERS + 1):
            worker = Process([binary, "--id", f"w{i}", "--link-dir", self.link_dir, *self.worker_args],
                             name=f"framegate-worker w{i}",
                             strip_env_prefixes=("FRAMEGATE_",))
            worker.start()
            self.workers.append(worker)
        deadline = time.monotonic() + timeout
        while sum(1 for line in self.output_lines() if REGISTERED_RE.search(line)) < TARGET_WORKERS:
            if time.monotonic() > deadline:
                raise ProcessError("workers did not register with the gateway\n" + self.describe_tail() +
                                   "".join("\n" + w.describe_tail() for w in self.workers))
            time.sleep(0.02)

    def stop(self, timeout: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
        code = super().stop(timeout, sig)
        for worker in self.workers:
            worker.stop(timeout)
        if self.link_dir:
            import shutil
            shutil.rmtree(self.link_dir, ignore_errors=True)
        return code

    @property
    def port(self) -> int:
        if self.ready_match is None:
            raise ProcessError("gateway is not listening yet")
        return int(self.ready_match.group(1))

    def client(self, timeout: float = 5.0) -> "WsClient":
        """A connected (not yet handshaken) WsClient for this gateway."""
        client = WsClient(self.host, self.port, timeout=timeout)
        client.connect()
        return client


# ---------------------------------------------------------------------------
# Frames
# ---------------------------------------------------------------------------


def apply_mask(data: bytes, key: bytes) -> bytes:
    """XOR `data` with the 4-byte masking key (RFC 6455 section 5.3)."""
    if not data:
        return b""
    size = len(data)
    stream = (key * (size // 4 + 1))[:size]
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(size, "big")


def encode_length(length: int, form: int | None = None) -> tuple[int, bytes]:
    """The 7-bit length field and extended length bytes for `length`.

    form=None picks the minimal encoding; 7, 16 or 64 forces a form (a 7-bit
    form may carry 126/127 to lie about the presence of an extended length).
    """
    if form is None:
        form = 7 if length <= 125 else 16 if length <= 0xFFFF else 64
    if form == 7:
        if not 0 <= length <= 127:
            raise ValueError("7-bit length form holds 0..127")
        return length, b""
    if form == 16:
        return 126, struct.pack("!H", length)
    if form == 64:
        return 127, struct.pack("!Q", length)
    raise ValueError(f"unknown length form {form}")


def build_frame(
    opcode: int,
    payload: bytes = b"",
    fin: bool = True,
    rsv: int = 0,
    mask: bool = True,
    mask_key: bytes | None = None,
    length: int | None = None,
    length_form: int | None = None,
) -> bytes:
    """Encode one frame by hand.

    `length` overrides the announced payload length (to lie about it);
    `length_form` forces the 7/16/64-bit encoding; `rsv` is a 3-bit value
    (RSV1=4, RSV2=2, RSV3=1); `opcode` may be any 4-bit value.
    """
    announced = len(payload) if length is None else length
    first = (0x80 if fin else 0) | ((rsv & 0x7) << 4) | (opcode & 0xF)
    len7, extended = encode_length(announced, length_form)
    second = (0x80 if mask else 0) | len7
    header = bytes([first, second]) + extended
    if not mask:
        return header + payload
    key = mask_key if mask_key is not None else os.urandom(4)
    return header + key + apply_mask(payload, key)


def close_payload(code: int | None = None, reason: bytes | str = b"") -> bytes:
    """Payload of a close frame: 2-byte code plus reason (empty if code is None)."""
    if code is None:
        return b""
    if isinstance(reason, str):
        reason = reason.encode("utf-8")
    return struct.pack("!H", code) + reason


@dataclasses.dataclass
class Frame:
    """One frame as received from the server."""

    fin: bool
    rsv: int
    opcode: int
    masked: bool
    payload: bytes

    @property
    def name(self) -> str:
        return OPCODE_NAMES.get(self.opcode, f"opcode-{self.opcode:#x}")

    @property
    def close_code(self) -> int | None:
        if self.opcode != OP_CLOSE or len(self.payload) < 2:
            return None
        return struct.unpack("!H", self.payload[:2])[0]

    @property
    def close_reason(self) -> bytes:
        return self.payload[2:] if self.opcode == OP_CLOSE else b""

    def describe(self) -> str:
        extra = f" code={self.close_code} reason={self.close_reason[:60]!r}" if self.opcode == OP_CLOSE else ""
        return (f"<{self.name} fin={int(self.fin)} rsv={self.rsv} masked={int(self.masked)} "
                f"len={len(self.payload)} payload={describe_bytes(self.payload)}{extra}>")


def describe_bytes(data: bytes, limit: int = 40) -> str:
    """Short printable description of a possibly huge payload."""
    if len(data) <= limit:
        return repr(bytes(data))
    digest = hashlib.sha1(data).hexdigest()[:12]
    return f"{bytes(data[:limit])!r}...({len(data)} bytes, sha1 {digest})"


def first_difference(a: bytes, b: bytes) -> int | None:
    """Index of the first differing byte, or None if equal."""
    if a == b:
        return None
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


# ---------------------------------------------------------------------------
# HTTP handshake
# ---------------------------------------------------------------------------


def make_key() -> str:
    return base64.b64encode(os.urandom(16)).decode("ascii")


def accept_for(key: str) -> str:
    """Expected Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 4.2.2)."""
    digest = hashlib.sha1((key + WS_GUID).encode("ascii")).digest()
    return base64.b64encode(digest).decode("ascii")


HeaderSpec = Mapping[str, "str | None"] | Iterable[tuple[str, "str | None"]]


def build_handshake_request(
    host: str,
    path: str = DEFAULT_PATH,
    key: str | None = None,
    headers: HeaderSpec | None = None,
    method: str = "GET",
    http_version: str = "HTTP/1.1",
) -> bytes:
    """An opening handshake request.

    `headers` overrides default headers of the same name (case-insensitive),
    a value of None removes that header, other names are appended in order.
    A list of pairs may repeat a name (each occurrence is kept).
    """
    defaults = [
        ("Host", host),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key or make_key()),
        ("Sec-WebSocket-Version", "13"),
    ]
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
    overridden = {name.lower() for name, _ in pairs}
    lines = [f"{method} {path} {http_version}"]
    lines += [f"{n}: {v}" for n, v in defaults if n.lower() not in overridden]
    lines += [f"{n}: {v}" for n, v in pairs if v is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@dataclasses.dataclass
class HttpResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    raw_head: bytes

    def header(self, name: str) -> str | None:
        """All values of header `name` joined with ', ', or None."""
        values = [v for n, v in self.headers if n.lower() == name.lower()]
        return ", ".join(values) if values else None

    def header_tokens(self, name: str) -> list[str]:
        value = self.header(name) or ""
        return [t.strip().lower() for t in value.split(",") if t.strip()]

    def describe(self) -> str:
        return f"{self.raw_head.decode('latin-1')!r} body={describe_bytes(self.body, 200)}"


def parse_http_head(head: bytes) -> tuple[int, str, list[tuple[str, str]]]:
    text = head.decode("latin-1")
    status_line, *header_lines = text.split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HandshakeError(f"malformed status line {status_line!r}")
    headers = []
    for line in header_lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise HandshakeError(f"malformed header line {line!r}")
        headers.append((name.strip(), value.strip()))
    return int(parts[1]), (parts[2] if len(parts) > 2 else ""), headers


# ---------------------------------------------------------------------------
# The gateway's /metrics (start it with "--admin", "127.0.0.1:0")
# ---------------------------------------------------------------------------

ADMIN_LISTEN_RE = re.compile(r"admin listening on [^ ]+:(\d+)")


def admin_port_of(process: Process, timeout: float = 10.0) -> int:
    """The port of the admin listener, read from the process's start-up line."""
    deadline = time.monotonic() + timeout
    while True:
        for line in process.output_lines():
            if match := ADMIN_LISTEN_RE.search(line):
                return int(match.group(1))
        if time.monotonic() > deadline:
            raise ProcessError("no admin listener line\n" + process.describe_tail())
        time.sleep(0.02)


def scrape_metrics(process: Process, timeout: float = 5.0) -> dict[str, float]:
    """Every sample of the process's /metrics, keyed as written: 'name' or 'name{label="v",...}'."""
    import urllib.request
    url = f"http://127.0.0.1:{admin_port_of(process)}/metrics"
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            samples[key] = float(value)
    return samples


# ---------------------------------------------------------------------------
# Raw WebSocket client
# ---------------------------------------------------------------------------


class WsClient:
    """A raw WebSocket client over a plain socket, for conformance testing.

    Nothing is validated on the way out: any frame can be built and sent,
    whole or in chunks.  Frames received are parsed strictly enough to tell
    what the server sent (and whether it masked them, which it must not).
    """

    def __init__(self, host: str, port: int, timeout: float = 5.0):
        self.host = host
        self.port = port
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.buffer = bytearray()
        self.eof = False
        self.reset = False
        self.handshake_response: HttpResponse | None = None
        self.key: str | None = None

    # -- connection --------------------------------------------------------

    def connect(self, source: str | None = None) -> "WsClient":
        """Connect, from the loopback address `source` when given (such as 127.0.0.2)."""
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout,
                                             source_address=(source, 0) if source else None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    def close(self) -> None:
        """Close the TCP socket (no close frame)."""
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def __enter__(self) -> "WsClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def host_header(self) -> str:
        return f"{self.host}:{self.port}"

    # -- sending -----------------------------------------------------------

    def send_raw(self, data: bytes, chunk_size: int | None = None, delay: float = 0.0) -> None:
        """Send bytes whole, or in `chunk_size` pieces with `delay` seconds between them."""
        if not chunk_size:
            self.sock.sendall(data)
            return
        for offset in range(0, len(data), chunk_size):
            self.sock.sendall(data[offset:offset + chunk_size])
            if delay:
                time.sleep(delay)

    def send_raw_quietly(self, data: bytes) -> bool:
        """Send, ignoring a peer that already closed; returns whether it was sent."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def send_frame(self, opcode: int, payload: bytes = b"", chunk_size: int | None = None,
                   delay: float = 0.0, **frame_options) -> bytes:
        """Build (see build_frame) and send one frame; returns the bytes sent."""
        data = build_frame(opcode, payload, **frame_options)
        self.send_raw(data, chunk_size, delay)
        return data

    def send_text(self, text: str | bytes, **options) -> bytes:
        payload = text.encode("utf-8") if isinstance(text, str) else text
        return self.send_frame(OP_TEXT, payload, **options)

    def send_binary(self, payload: bytes, **options) -> bytes:
        return self.send_frame(OP_BINARY, payload, **options)

    def send_ping(self, payload: bytes = b"", **options) -> bytes:
        return self.send_frame(OP_PING, payload, **options)

    def send_pong(self, payload: bytes = b"", **options) -> bytes:
        return self.send_frame(OP_PONG, payload, **options)

    def send_close(self, code: int | None = None, reason: bytes | str = b"", **options) -> bytes:
        return self.send_frame(OP_CLOSE, close_payload(code, reason), **options)

    def send_fragments(self, opcode: int, fragments: Sequence[bytes], **options) -> None:
        """Send a message as the given fragments (first with `opcode`, then continuations)."""
        data = b"".join(
            build_frame(opcode if i == 0 else OP_CONT, part, fin=(i == len(fragments) - 1))
            for i, part in enumerate(fragments)
        )
        self.send_raw(data, **options)

    # -- handshake ---------------------------------------------------------

    def request_handshake(self, path: str = DEFAULT_PATH, headers: HeaderSpec | None = None,
                          method: str = "GET", http_version: str = "HTTP/1.1",
                          key: str | None = None, timeout: float | None = None) -> HttpResponse:
        """Send an opening handshake and return the response, whatever its status."""
        self.key = key or make_key()
        request = build_handshake_request(self.host_header, path, self.key, headers, method, http_version)
        return self.request_raw(request, timeout)

    def request_raw(self, request: bytes, timeout: float | None = None) -> HttpResponse:
        """Send raw request bytes and read one HTTP response."""
        self.send_raw(request)
        self.handshake_response = self.read_http_response(timeout)
        return self.handshake_response

    def handshake(self, path: str = DEFAULT_PATH, headers: HeaderSpec | None = None,
                  timeout: float | None = None) -> HttpResponse:
        """Perform the opening handshake; raise HandshakeError unless it is a valid 101."""
        response = self.request_handshake(path, headers, timeout=timeout)
        problem = validate_upgrade(response, self.key)
        if problem:
            raise HandshakeError(f"handshake refused or invalid: {problem}: {response.describe()}", response)
        return response

    def read_http_response(self, timeout: float | None = None) -> HttpResponse:
        """Read a status line and headers; for non-101, the body (Content-Length or to EOF)."""
        deadline = self._deadline(timeout)
        head = self._read_http_head(deadline)
        status, reason, headers = parse_http_head(head)
        response = HttpResponse(status, reason, headers, b"", head)
        if status != 101:
            response.body = self._read_http_body(response, deadline)
        return response

    def _read_http_head(self, deadline: float) -> bytes:
        while b"\r\n\r\n" not in self.buffer:
            try:
                self._fill(deadline)
            except WsConnectionClosed as exc:
                raise WsConnectionClosed(
                    f"connection closed before a complete HTTP response head; got {bytes(self.buffer)!r}",
                    exc.reset, bytes(self.buffer)) from exc
        end = self.buffer.index(b"\r\n\r\n") + 4
        head = bytes(self.buffer[:end - 4])
        del self.buffer[:end]
        return head

    def _read_http_body(self, response: HttpResponse, deadline: float) -> bytes:
        length = response.header("Content-Length")
        if length is not None and length.strip().isdigit():
            wanted = int(length)
            while len(self.buffer) < wanted:
                try:
                    self._fill(deadline)
                except WsConnectionClosed:
                    break
        else:
            self.read_to_eof(max(0.0, deadline - time.monotonic()))
            wanted = len(self.buffer)
        body = bytes(self.buffer[:wanted])
        del self.buffer[:wanted]
        return body

    # -- receiving ---------------------------------------------------------

    def _deadline(self, timeout: float | None) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _fill(self, deadline: float) -> None:
        """Read more bytes into the buffer, or raise WsTimeout / WsConnectionClosed."""
        if self.eof:
            raise WsConnectionClosed("connection already closed by peer", self.reset)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WsTimeout("deadline passed")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(262144)
        except (socket.timeout, TimeoutError) as exc:
            raise WsTimeout("timed out waiting for data") from exc
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError) as exc:
            self.eof = self.reset = True
            raise WsConnectionClosed(f"connection reset by peer ({exc})", reset=True) from exc
        if not data:
            self.eof = True
            raise WsConnectionClosed("connection closed by peer (EOF)")
        self.buffer += data

    def recv_frame(self, timeout: float | None = None) -> Frame:
        """Read one frame; raises WsTimeout or WsConnectionClosed (buffer kept intact)."""
        deadline = self._deadline(timeout)
        while True:
            frame = self._parse_frame()
            if frame is not None:
                return frame
            try:
                self._fill(deadline)
            except WsConnectionClosed as exc:
                raise WsConnectionClosed(
                    f"{exc}; {len(self.buffer)} unparsed bytes pending", exc.reset, bytes(self.buffer)) from exc

    def _parse_frame(self) -> Frame | None:
        buf = self.buffer
        if len(buf) < 2:
            return None
        masked = bool(buf[1] & 0x80)
        length, offset = buf[1] & 0x7F, 2
        if length == 126:
            if len(buf) < 4:
                return None
            length, offset = struct.unpack_from("!H", buf, 2)[0], 4
        elif length == 127:
            if len(buf) < 10:
                return None
            length, offset = struct.unpack_from("!Q", buf, 2)[0], 10
        if length > MAX_SERVER_FRAME:
            raise ServerProtocolError(f"server announced a {length}-byte frame")
        key_size = 4 if masked else 0
        if len(buf) < offset + key_size + length:
            return None
        payload = bytes(buf[offset + key_size:offset + key_size + length])
        if masked:
            payload = apply_mask(payload, bytes(buf[offset:offset + 4]))
        frame = Frame(bool(buf[0] & 0x80), (buf[0] >> 4) & 0x7, buf[0] & 0xF, masked, payload)
        del buf[:offset + key_size + length]
        return frame

    def read_to_eof(self, timeout: float | None = None) -> bool:
        """Read into the buffer until the peer closes; True if it closed in time."""
        deadline = self._deadline(timeout)
        while True:
            try:
                self._fill(deadline)
            except WsConnectionClosed:
                return True
            except WsTimeout:
                return False

    def wait_for_tcp_close(self, timeout: float | None = None) -> tuple[bool, bytes]:
        """Wait for EOF/reset; returns (closed, bytes that arrived meanwhile)."""
        before = len(self.buffer)
        closed = self.read_to_eof(timeout)
        return closed, bytes(self.buffer[before:])

    def recv_until_close(self, timeout: float | None = None) -> tuple[list[Frame], bool]:
        """Collect frames until TCP close or timeout; returns (frames, closed)."""
        deadline = self._deadline(timeout)
        frames: list[Frame] = []
        while True:
            try:
                frames.append(self.recv_frame(max(0.0, deadline - time.monotonic())))
            except WsConnectionClosed:
                return frames, True
            except WsTimeout:
                return frames, False


def validate_upgrade(response: HttpResponse, key: str) -> str | None:
    """What is wrong with a 101 response to `key` (RFC 6455 4.2.2), or None."""
    if response.status != 101:
        return f"status {response.status}"
    if "websocket" not in response.header_tokens("Upgrade"):
        return f"Upgrade header is {response.header('Upgrade')!r}"
    if "upgrade" not in response.header_tokens("Connection"):
        return f"Connection header is {response.header('Connection')!r}"
    if response.header("Sec-WebSocket-Accept") != accept_for(key):
        return (f"Sec-WebSocket-Accept is {response.header('Sec-WebSocket-Accept')!r}, "
                f"expected {accept_for(key)!r}")
    return None


# ---------------------------------------------------------------------------
# unittest base class
# ---------------------------------------------------------------------------


class GatewayTestCase(unittest.TestCase):
    """Runs one gateway per test class (gateway_args) and offers WebSocket assertions.

    Set `gateway_args = None` in a subclass to start no class-wide gateway
    (tests then call self.start_gateway()).
    """

    gateway_args: Sequence[str] | None = ()
    gateway_env: Mapping[str, str] | None = None  # e.g. {"FRAMEGATE_MAX_MESSAGE_SIZE": "65536"}
    worker_args: Sequence[str] = ()  # given to the workers when FRAMEGATE_CONFORMANCE_TARGET is "workers"
    gateway: GatewayProcess | None = None
    io_timeout = 5.0       # bound for an expected frame to arrive
    close_bound = 10.0     # bound for the TCP connection to end after a close

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if cls.gateway_args is None:
            return
        cls.gateway = GatewayProcess(cls.gateway_args, env=cls.gateway_env, worker_args=cls.worker_args)
        cls.addClassCleanup(cls._stop_class_gateway)
        cls.gateway.start()

    @classmethod
    def _stop_class_gateway(cls) -> None:
        if cls.gateway.popen is not None:  # never spawned: start() already raised
            cls.gateway.stop_and_check(0)

    def setUp(self) -> None:
        super().setUp()
        if self.gateway is not None and not self.gateway.is_running():
            self.fail(f"gateway is not running (exit code {self.gateway.returncode})\n"
                      f"{self.gateway.describe_tail()}")

    def tearDown(self) -> None:
        self.doCleanups()  # close this test's sockets before the liveness check
        if self.gateway is not None and self.gateway.popen is not None:
            time.sleep(0.01)
            if not self.gateway.is_running():
                self.fail(f"gateway died during this test (exit code {self.gateway.returncode})\n"
                          f"{self.gateway.describe_tail()}")
        super().tearDown()

    # -- processes and clients ----------------------------------------------

    def start_gateway(self, extra_args: Sequence[str] = (),
                      env: Mapping[str, str] | None = None) -> GatewayProcess:
        """A gateway owned by this test (stopped by cleanup if the test does not)."""
        gateway = GatewayProcess(extra_args, env=env)
        self.addCleanup(gateway.stop)
        gateway.start()
        return gateway

    def connect(self, gateway: GatewayProcess | None = None, source: str | None = None) -> WsClient:
        """A TCP-connected client (from the address `source` when given), closed at cleanup."""
        gateway = gateway or self.gateway
        client = WsClient(gateway.host, gateway.port, timeout=self.io_timeout)
        self.addCleanup(client.close)
        client.connect(source)
        return client

    def open_client(self, gateway: GatewayProcess | None = None, path: str = DEFAULT_PATH,
                    headers: HeaderSpec | None = None) -> WsClient:
        """A client that completed a valid opening handshake."""
        client = self.connect(gateway)
        client.handshake(path, headers)
        return client

    def tail(self) -> str:
        return self.gateway.describe_tail(15) if self.gateway else ""

    def assert_eventually_accepted(self, gateway: GatewayProcess | None = None, bound: float = 5.0) -> None:
        """A connection slot is free again: a handshake and an echo succeed within `bound` seconds
        (a bounded retry: a close is processed asynchronously)."""
        deadline = time.monotonic() + bound
        while True:
            client = self.connect(gateway)
            try:
                client.handshake()
                self.roundtrip(client, OP_TEXT, b"admitted")
                return
            except HandshakeError as exc:
                client.close()
                if time.monotonic() > deadline:
                    self.fail(f"no connection slot was released within {bound} s: {exc}")
                time.sleep(0.1)

    # -- frame assertions ----------------------------------------------------

    def receive_frame(self, client: WsClient, what: str = "a frame", timeout: float | None = None) -> Frame:
        """The next frame, unmasked, failing clearly on timeout or TCP close; its RSV bits are the caller's to check."""
        timeout = self.io_timeout if timeout is None else timeout
        try:
            frame = client.recv_frame(timeout)
        except WsTimeout:
            self.fail(f"expected {what}, nothing arrived within {timeout}s\n{self.tail()}")
        except WsConnectionClosed as exc:
            self.fail(f"expected {what}, but the TCP connection ended: {exc}\n{self.tail()}")
        self.assertFalse(frame.masked, f"server frames must not be masked (RFC 6455 5.1): {frame.describe()}")
        return frame

    def expect_frame(self, client: WsClient, what: str = "a frame", timeout: float | None = None) -> Frame:
        """The next frame, with no RSV bit set (no extension negotiated)."""
        frame = self.receive_frame(client, what, timeout)
        self.assertEqual(frame.rsv, 0, f"server set RSV bits without an extension: {frame.describe()}")
        return frame

    def assert_frame(self, client: WsClient, opcode: int, payload: bytes, what: str | None = None) -> Frame:
        """The next frame is a final frame of `opcode` carrying exactly `payload`."""
        what = what or f"{OPCODE_NAMES.get(opcode, opcode)} frame of {len(payload)} bytes"
        frame = self.expect_frame(client, what)
        self.assertEqual(frame.opcode, opcode, f"expected {what}, got {frame.describe()}")
        self.assertTrue(frame.fin, f"expected an unfragmented {what}, got {frame.describe()}")
        if frame.payload != payload:
            self.fail(f"expected {what} = {describe_bytes(payload)}, got {frame.describe()}; "
                      f"first difference at byte {first_difference(frame.payload, payload)}")
        return frame

    def assert_echo(self, client: WsClient, opcode: int, payload: bytes) -> Frame:
        """The gateway echoed a message of `opcode` with `payload` as one frame."""
        return self.assert_frame(client, opcode, payload, f"echo of a {len(payload)}-byte "
                                 f"{OPCODE_NAMES.get(opcode)} message")

    def whoami(self, client: WsClient) -> dict:
        """What a worker's /whoami test app (--enable-test-apps) tells `client`, opened on /whoami."""
        client.send_frame(OP_TEXT, b"?")
        return json.loads(self.receive_frame(client, "the /whoami answer").payload)

    def roundtrip(self, client: WsClient, opcode: int, payload: bytes, **send_options) -> Frame:
        """Send one frame and expect it echoed."""
        client.send_frame(opcode, payload, **send_options)
        return self.assert_echo(client, opcode, payload)

    def assert_pong(self, client: WsClient, payload: bytes) -> Frame:
        return self.assert_frame(client, OP_PONG, payload, f"pong with {len(payload)}-byte payload")

    def assert_close(self, client: WsClient, code: int | None, what: str = "", reply: bool = True) -> Frame:
        """Next frame is a close with `code` (None: empty payload); then TCP ends.

        Like Autobahn, the client answers the server's close with a close of
        the same code before waiting for the TCP close.
        """
        what = what or (f"close frame with code {code}" if code is not None else "empty close frame")
        frame = self.expect_frame(client, what)
        self.assertEqual(frame.opcode, OP_CLOSE, f"expected {what}, got {frame.describe()}")
        self.assertTrue(frame.fin, f"close frame must not be fragmented: {frame.describe()}")
        if code is None:
            self.assertEqual(frame.payload, b"", f"expected {what}, got {frame.describe()}")
        else:
            self.assertEqual(frame.close_code, code, f"expected {what}, got {frame.describe()}")
            self.assert_valid_reason(frame)
        if reply:
            client.send_raw_quietly(build_frame(OP_CLOSE, close_payload(frame.close_code)))
        self.assert_tcp_closed(client, f"after the {what}")
        return frame

    def assert_valid_reason(self, frame: Frame) -> None:
        try:
            frame.close_reason.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"close reason is not UTF-8: {frame.describe()}")

    def assert_fails_with(self, client: WsClient, code: int, reply: bool = True) -> Frame:
        """Autobahn 'fail the connection' verdict: close frame `code`, then TCP closed.

        No other frame may arrive before the close (anything the test expected
        first must have been consumed already).  `reply=False` when the client
        already sent a close frame of its own.
        """
        return self.assert_close(client, code, f"close frame with code {code} (fail the connection)", reply)

    def assert_tcp_closed(self, client: WsClient, context: str = "") -> None:
        """The server ends the TCP connection within close_bound and sends nothing more."""
        closed, extra = client.wait_for_tcp_close(self.close_bound)
        self.assertTrue(closed, f"TCP connection still open {self.close_bound}s {context}\n{self.tail()}")
        self.assertEqual(extra, b"", f"server sent bytes after its close frame {context}: {describe_bytes(extra)}")
        client.close()  # finish the TCP close on our side too, as a real client would

    def assert_no_frame(self, client: WsClient, wait: float, context: str = "") -> None:
        """Nothing arrives for `wait` seconds (and the connection stays open)."""
        try:
            frame = client.recv_frame(wait)
        except WsTimeout:
            return
        except WsConnectionClosed as exc:
            self.fail(f"connection ended unexpectedly {context}: {exc}")
        self.fail(f"unexpected frame {context}: {frame.describe()}")

    def assert_refused(self, response: HttpResponse, status: int) -> None:
        """A handshake refusal per the contract: status, one-line non-empty body, Connection: close."""
        self.assertEqual(response.status, status, f"expected HTTP {status}, got {response.describe()}")
        body = response.body.rstrip(b"\r\n")
        self.assertTrue(body.strip(), f"HTTP {status} has an empty body: {response.describe()}")
        self.assertNotIn(b"\n", body, f"HTTP {status} body is not one line: {response.describe()}")
        self.assertTrue((response.header("Content-Type") or "").lower().startswith("text/plain"),
                        f"HTTP {status} body is not text/plain: {response.describe()}")
        self.assertIn("close", response.header_tokens("Connection"),
                      f"HTTP {status} lacks 'Connection: close': {response.describe()}")
        self.assertIsNone(response.header("Sec-WebSocket-Accept"),
                          f"a refusal must not carry Sec-WebSocket-Accept: {response.describe()}")

    def assert_refuses_to_start(self, *args: str) -> str:
        """The contract for bad options: the gateway run with `args` exits 2 with one line on stderr (returned)."""
        process = Process([gateway_binary(), *args], strip_env_prefixes=("FRAMEGATE_",))
        self.addCleanup(process.stop)
        process.start()
        code = process.wait(10.0)
        stderr_lines = [line for line in process.output_lines() if line.startswith("[stderr]")]
        self.assertEqual(code, 2, process.describe_tail())
        self.assertEqual(len(stderr_lines), 1, process.describe_tail())
        return stderr_lines[0]
