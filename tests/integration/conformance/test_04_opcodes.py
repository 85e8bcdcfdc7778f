"""Autobahn section 4: reserved opcodes."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_PING, OP_TEXT, GatewayTestCase, build_frame,
)

RESERVED_DATA_OPCODES = (3, 4, 5, 6, 7)
RESERVED_CONTROL_OPCODES = (11, 12, 13, 14, 15)


class ReservedOpcodesTest(GatewayTestCase):
    """RFC 6455 5.2: reserved opcodes (0x3-0x7, 0xB-0xF) fail the connection with 1002."""

    def check_reserved(self, opcode: int, payload: bytes) -> None:
        client = self.open_client()
        client.send_frame(opcode, payload)
        self.assert_fails_with(client, 1002)

    def check_reserved_after_echo(self, opcode: int) -> None:
        """Autobahn 4.x.3 style: good text, reserved frame, ping -> echo, then 1002, no pong."""
        client = self.open_client()
        client.send_raw(build_frame(OP_TEXT, b"good") + build_frame(opcode, b"reserved")
                        + build_frame(OP_PING, b"unanswered"))
        self.assert_echo(client, OP_TEXT, b"good")
        self.assert_fails_with(client, 1002)

    def test_reserved_non_control_opcodes_empty(self):
        for opcode in RESERVED_DATA_OPCODES:
            with self.subTest(opcode=opcode):
                self.check_reserved(opcode, b"")

    def test_reserved_non_control_opcodes_with_payload(self):
        for opcode in RESERVED_DATA_OPCODES:
            with self.subTest(opcode=opcode):
                self.check_reserved(opcode, b"reserved opcode payload")

    def test_reserved_control_opcodes_empty(self):
        for opcode in RESERVED_CONTROL_OPCODES:
            with self.subTest(opcode=opcode):
                self.check_reserved(opcode, b"")

    def test_reserved_control_opcodes_with_payload(self):
        for opcode in RESERVED_CONTROL_OPCODES:
            with self.subTest(opcode=opcode):
                self.check_reserved(opcode, b"reserved opcode payload")

    def test_reserved_opcodes_after_a_good_echo(self):
        for opcode in RESERVED_DATA_OPCODES + RESERVED_CONTROL_OPCODES:
            with self.subTest(opcode=opcode):
                self.check_reserved_after_echo(opcode)


if __name__ == "__main__":
    unittest.main()
