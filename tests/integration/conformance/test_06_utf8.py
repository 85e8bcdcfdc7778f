"""Autobahn section 6: UTF-8 handling of text messages."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from framegate_harness import (  # noqa: E402
    OP_CONT, OP_TEXT, GatewayTestCase,
)

KOSME = "κόσμε".encode("utf-8")

VALID_TEXTS = {
    "greek kosme": KOSME,
    "mixed latin-1 range": "Hello-µ@ßöäüàá-UTF-8!!".encode("utf-8"),
    "nul and del": b"\x00\x7f",
    "U+0080": b"\xc2\x80",
    "U+07FF": b"\xdf\xbf",
    "U+0800": b"\xe0\xa0\x80",
    "U+D7FF (last before surrogates)": b"\xed\x9f\xbf",
    "U+E000 (first after surrogates)": b"\xee\x80\x80",
    "U+FEFF (BOM)": b"\xef\xbb\xbf",
    "U+FFFD": b"\xef\xbf\xbd",
    "U+FFFE (noncharacter)": b"\xef\xbf\xbe",
    "U+FFFF (noncharacter)": b"\xef\xbf\xbf",
    "U+10000": b"\xf0\x90\x80\x80",
    "U+1D11E (G clef)": "𝄞".encode("utf-8"),
    "U+10FFFF (last code point)": b"\xf4\x8f\xbf\xbf",
}

# One sample mixing 1-, 2-, 3- and 4-byte sequences, split at every byte offset.
SPLIT_SAMPLE = "a" .encode() + KOSME + "-€-𝄞-".encode("utf-8") + b"\xf4\x8f\xbf\xbf" + b"z"

INVALID_TEXTS = {
    "lone continuation 0x80": b"\x80",
    "lone continuation 0xBF in text": b"ab\xbfcd",
    "overlong '/' in 2 bytes": b"\xc0\xaf",
    "overlong '/' in 3 bytes": b"\xe0\x80\xaf",
    "overlong '/' in 4 bytes": b"\xf0\x80\x80\xaf",
    "overlong NUL": b"\xc0\x80",
    "maximal overlong 2 bytes": b"\xc1\xbf",
    "maximal overlong 3 bytes": b"\xe0\x9f\xbf",
    "maximal overlong 4 bytes": b"\xf0\x8f\xbf\xbf",
    "high surrogate U+D800": b"\xed\xa0\x80",
    "high surrogate U+DB7F": b"\xed\xad\xbf",
    "low surrogate U+DC00": b"\xed\xb0\x80",
    "low surrogate U+DFFF": b"\xed\xbf\xbf",
    "surrogate pair as UTF-8": b"\xed\xa0\x80\xed\xb0\x80",
    "U+110000": b"\xf4\x90\x80\x80",
    "4-byte above range 0xF7": b"\xf7\xbf\xbf\xbf",
    "5-byte sequence": b"\xf8\x88\x80\x80\x80",
    "6-byte sequence": b"\xfc\x84\x80\x80\x80\x80",
    "byte 0xFE": b"\xfe",
    "byte 0xFF": b"\xff",
    "0xFE 0xFE 0xFF 0xFF": b"\xfe\xfe\xff\xff",
    "0xFF inside valid text": KOSME + b"\xff" + KOSME,
    "start byte then ASCII": b"\xc2\x41",
    "3-byte start, continuation, ASCII": b"\xe0\xa0\x41",
    "truncated 2-byte at end": KOSME + b"\xce",
    "truncated 3-byte at end": b"\xe2\x82",
    "truncated 4-byte at end": b"\xf0\x9d\x84",
    "truncated kosme": KOSME[:3],
}

# Invalid bytes that make any continuation impossible: a validator sees the
# error as soon as these bytes arrive (Autobahn 6.4 "fail fast").
FAIL_FAST_PREFIXES = {
    "byte 0xFF": b"\xff",
    "byte 0xFE": b"\xfe",
    "overlong 2 bytes": b"\xc0\xaf",
    "surrogate U+D800": b"\xed\xa0\x80",
    "U+110000": b"\xf4\x90\x80\x80",
    "lone continuation": b"\x80",
}


class ValidUtf8Test(GatewayTestCase):
    """RFC 6455 5.6 / 8.1: valid UTF-8 text (any code point, noncharacters included) is echoed."""

    def test_valid_texts_in_one_frame(self):
        client = self.open_client()
        for name, payload in VALID_TEXTS.items():
            with self.subTest(name):
                self.roundtrip(client, OP_TEXT, payload)

    def test_valid_texts_sent_byte_by_byte(self):
        client = self.open_client()
        payload = b"".join(VALID_TEXTS.values())
        self.roundtrip(client, OP_TEXT, payload, chunk_size=1, delay=0.0005)

    def test_split_across_two_fragments_at_every_offset(self):
        """Autobahn 6.2.2 generalised: a code point may straddle a fragment boundary."""
        client = self.open_client()
        for offset in range(1, len(SPLIT_SAMPLE)):
            with self.subTest(offset=offset):
                client.send_fragments(OP_TEXT, [SPLIT_SAMPLE[:offset], SPLIT_SAMPLE[offset:]])
                self.assert_echo(client, OP_TEXT, SPLIT_SAMPLE)

    def test_split_into_one_byte_fragments(self):
        """Autobahn 6.2.3."""
        client = self.open_client()
        client.send_fragments(OP_TEXT, [SPLIT_SAMPLE[i:i + 1] for i in range(len(SPLIT_SAMPLE))])
        self.assert_echo(client, OP_TEXT, SPLIT_SAMPLE)


class InvalidUtf8Test(GatewayTestCase):
    """RFC 6455 8.1: invalid UTF-8 in a text message fails the connection with 1007."""

    def test_invalid_in_one_frame(self):
        for name, payload in INVALID_TEXTS.items():
            with self.subTest(name):
                client = self.open_client()
                client.send_text(payload)
                self.assert_fails_with(client, 1007)

    def test_invalid_after_a_valid_echo(self):
        client = self.open_client()
        self.roundtrip(client, OP_TEXT, KOSME)
        client.send_text(b"\xed\xa0\x80")
        self.assert_fails_with(client, 1007)

    def test_invalid_in_last_fragment(self):
        for name, payload in INVALID_TEXTS.items():
            with self.subTest(name):
                client = self.open_client()
                client.send_fragments(OP_TEXT, [b"valid start ", payload])
                self.assert_fails_with(client, 1007)

    def test_truncated_sequence_completed_by_empty_final_fragment(self):
        """The message ends in the middle of a code point: detected at the final fragment."""
        client = self.open_client()
        client.send_frame(OP_TEXT, KOSME + b"\xce", fin=False)
        client.send_frame(OP_CONT, b"", fin=True)
        self.assert_fails_with(client, 1007)

    def test_split_invalid_sequence_across_fragments(self):
        """Surrogate U+D800 split over two fragments."""
        client = self.open_client()
        client.send_fragments(OP_TEXT, [b"ab\xed", b"\xa0\x80cd"])
        self.assert_fails_with(client, 1007)


class Utf8FailFastTest(GatewayTestCase):
    """RFC 6455 8.1 with Autobahn 6.4 fail-fast: invalid UTF-8 in an unfinished message fails at once (1007)."""

    def test_invalid_bytes_in_first_fragment_of_unfinished_message(self):
        for name, invalid in FAIL_FAST_PREFIXES.items():
            with self.subTest(name):
                client = self.open_client()
                client.send_frame(OP_TEXT, KOSME + invalid + b"more", fin=False)
                self.assert_fails_with(client, 1007)  # the rest is never sent

    def test_invalid_bytes_in_middle_fragment_of_unfinished_message(self):
        """Autobahn 6.4.1: valid first fragment, invalid second, the third never sent."""
        client = self.open_client()
        client.send_frame(OP_TEXT, KOSME, fin=False)
        client.send_frame(OP_CONT, b"\xf4\x90\x80\x80", fin=False)
        self.assert_fails_with(client, 1007)

    def test_impossible_prefix_at_end_of_unfinished_fragment(self):
        """Autobahn 6.4.2: 0xF4 0x90 can never start a valid code point (> U+10FFFF)."""
        client = self.open_client()
        client.send_frame(OP_TEXT, KOSME + b"\xf4\x90", fin=False)
        self.assert_fails_with(client, 1007)


class SkipUtf8ValidationTest(GatewayTestCase):
    """Contract --skip-utf8-validation: text payloads are trusted (RFC 6455 8.1 check switched off)."""

    gateway_args = ("--skip-utf8-validation",)

    def test_invalid_text_is_echoed_unchanged(self):
        client = self.open_client()
        for name in ("byte 0xFF", "high surrogate U+D800", "overlong '/' in 2 bytes"):
            with self.subTest(name):
                self.roundtrip(client, OP_TEXT, INVALID_TEXTS[name])


if __name__ == "__main__":
    unittest.main()
