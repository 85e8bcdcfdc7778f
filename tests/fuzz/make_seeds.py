#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<name>/).

The seeds are small meaningful inputs from which libFuzzer starts, and the
replay tests (fuzz_replay_<name>) run them as regression tests. Re-run after
changing this script and commit the output:  python3 tests/fuzz/make_seeds.py

Input layouts (see the targets):
  frame_parser: [split seed][flags][client frames...]
                split seed 0 feeds whole; flags bits 0-2 size limit 64<<n,
                bits 3-5 fragment limit 1+3n, bit 6 allow RSV1, bit 7 skip UTF-8
  inflate:      [split seed][flags][mode][...]  mode bit 7 clear: client frames with
                RSV1 allowed (flags as frame_parser's, bits 0-2 limit the inflated size),
                mode bit 6 client context takeover, bits 0-2 its window 8+n;
                mode bit 7 set: round trip of the rest as messages, window 8+(bits 0-2),
                bit 3 context takeover, flags: level 1+(bits 0-2)%9, memLevel 1+(bits 3-5)
  utf8:         [split seed][text...]
  handshake:    raw HTTP request bytes
  link_envelope: [split seed][framed envelopes...]
  hot_envelopes: one Envelope body (no frame header), mostly Send and Message
  cluster_reply: RESP2 replies one after another (CLUSTER SHARDS, CLUSTER SLOTS, errors)
  static_files: one request target of a plain GET (the directory is the target's own fixture)
  proxy_header: what a connection sends first: a PROXY protocol header (v1 text, v2 binary),
                mostly followed by the client's HTTP request
  forwarded_for: [flags][header lines]  flags bit 0: RFC 7239 Forwarded, else
                an address list (X-Forwarded-For); lines separated by \n
  redis_inbound: [flags][channel message]  flags bit 0 deliver foreign messages,
                bits 1-3 n: payload limit none (n=0) or 4<<n bytes,
                bit 4: secret "fuzz" on channel framegate:room:R
Files found in the corpus directories that this script does not write (such
as crash reproducers added by hand) are left alone.
"""

import base64
import hashlib
import hmac
import os
import re
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = b"\x37\xfa\x21\x3d"


def frame(opcode, payload=b"", fin=True, rsv=0, masked=True, length=None):
    """A client frame; `length` overrides the header's length field."""
    n = len(payload) if length is None else length
    out = bytes([(0x80 if fin else 0) | rsv | opcode])
    mask_bit = 0x80 if masked else 0
    if n < 126:
        out += bytes([mask_bit | n])
    elif n <= 0xFFFF:
        out += bytes([mask_bit | 126]) + struct.pack(">H", n)
    else:
        out += bytes([mask_bit | 127]) + struct.pack(">Q", n)
    if masked:
        out += KEY
        payload = bytes(b ^ KEY[i % 4] for i, b in enumerate(payload))
    return out + payload


def close(code, reason=b""):
    return frame(0x8, struct.pack(">H", code) + reason)


# flags: default limits are 64 B << 4 = 1 KiB and 1 + 3*5 = 16 fragments
DEFAULT_FLAGS = 0x04 | (5 << 3)
SMALL_FLAGS = 0x00 | (0 << 3)  # 64 B, 1 fragment
RSV1_FLAGS = DEFAULT_FLAGS | 0x40
NO_UTF8_FLAGS = DEFAULT_FLAGS | 0x80

FRAGMENTED = frame(0x1, b"Hel", fin=False) + frame(0x9, b"p") + frame(0x0, b"lo", fin=False) + frame(0xA) + frame(0x0, b"!")

FRAME_SEEDS = {
    "text_hello": (0, DEFAULT_FLAGS, frame(0x1, b"Hello")),
    "binary_125": (0, DEFAULT_FLAGS, frame(0x2, bytes(range(125)))),
    "binary_126_len16": (0, DEFAULT_FLAGS, frame(0x2, bytes(126))),
    "binary_300_split": (7, 0x07 | (5 << 3), frame(0x2, bytes(i % 251 for i in range(300)))),
    "empty_text": (0, DEFAULT_FLAGS, frame(0x1)),
    "fragmented_with_controls": (0, DEFAULT_FLAGS, FRAGMENTED),
    "fragmented_byte_at_a_time": (12, DEFAULT_FLAGS, FRAGMENTED),
    "fragmented_small_pieces": (3, DEFAULT_FLAGS, FRAGMENTED + close(1000, b"bye")),
    "utf8_across_fragments": (5, DEFAULT_FLAGS, frame(0x1, b"\xe2", fin=False) + frame(0x0, b"\x82\xac")),
    "ping_pong_close": (0, DEFAULT_FLAGS, frame(0x9, b"ping") + frame(0xA, b"pong") + close(1001, b"going")),
    "close_empty": (0, DEFAULT_FLAGS, frame(0x8)),
    "close_reason_utf8": (2, DEFAULT_FLAGS, close(4000, "au revoir ✓".encode())),
    "rsv1_allowed": (0, RSV1_FLAGS, frame(0x1, b"x", rsv=0x40)),
    "no_utf8_check": (0, NO_UTF8_FLAGS, frame(0x1, b"\xff\xfe")),
    # One seed per error.
    "err_rsv1": (0, DEFAULT_FLAGS, frame(0x1, b"x", rsv=0x40)),
    "err_rsv2": (0, RSV1_FLAGS, frame(0x1, b"x", rsv=0x20)),
    "err_rsv1_on_ping": (0, RSV1_FLAGS, frame(0x9, b"x", rsv=0x40)),
    "err_reserved_opcode_3": (0, DEFAULT_FLAGS, frame(0x3, b"x")),
    "err_reserved_opcode_11": (0, DEFAULT_FLAGS, frame(0xB)),
    "err_unmasked": (0, DEFAULT_FLAGS, frame(0x1, b"hi", masked=False)),
    "err_control_too_long": (0, DEFAULT_FLAGS, frame(0x9, bytes(126))),
    "err_control_fragmented": (0, DEFAULT_FLAGS, frame(0x9, b"x", fin=False)),
    "err_continuation_first": (0, DEFAULT_FLAGS, frame(0x0, b"x")),
    "err_data_in_fragmented": (0, DEFAULT_FLAGS, frame(0x1, b"a", fin=False) + frame(0x2, b"b")),
    "err_invalid_length": (0, DEFAULT_FLAGS, frame(0x2, length=1 << 63)),
    "err_too_big_single": (0, SMALL_FLAGS, frame(0x2, bytes(65))),
    "err_too_big_fragments": (0, DEFAULT_FLAGS | (5 << 3), frame(0x2, bytes(1000), fin=False) + frame(0x0, bytes(25))),
    "err_too_many_fragments": (0, SMALL_FLAGS, frame(0x1, b"a", fin=False) + frame(0x0, b"b")),
    "err_invalid_utf8": (0, DEFAULT_FLAGS, frame(0x1, b"ok\xc0\x80")),
    "err_utf8_truncated": (0, DEFAULT_FLAGS, frame(0x1, b"\xf0\x9f\x98")),
    "err_close_one_byte": (0, DEFAULT_FLAGS, frame(0x8, b"\x03")),
    "err_close_code_1005": (0, DEFAULT_FLAGS, close(1005)),
    "err_close_code_5000": (0, DEFAULT_FLAGS, close(5000)),
    "err_close_bad_reason": (0, DEFAULT_FLAGS, close(1000, b"\xed\xa0\x80")),
    "truncated_header": (0, DEFAULT_FLAGS, frame(0x2, bytes(70000))[:7]),
}

def deflated(data, level=6, bits=15):
    c = zlib.compressobj(level, zlib.DEFLATED, -bits)
    return (c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]


HELLO = bytes([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])  # RFC 7692 7.2.3.1
HELLO_AGAIN = bytes([0xF2, 0x00, 0x11, 0x00, 0x00])  # 7.2.3.2: a back reference to the first
JSON = b'[{"id":1,"user":"ada","text":"hello"},{"id":2,"user":"bob","text":"hello again"}]' * 4
TAKEOVER = 0x40
ROUND_TRIP = 0x80


def rsv1(opcode, payload, fin=True):
    return frame(opcode, payload, fin=fin, rsv=0x40)


INFLATE_SEEDS = {
    "hello": (0, DEFAULT_FLAGS, 7, rsv1(0x1, HELLO)),
    "hello_takeover": (0, DEFAULT_FLAGS, TAKEOVER | 7, rsv1(0x1, HELLO) + rsv1(0x1, HELLO_AGAIN)),
    "err_back_reference_without_takeover": (0, DEFAULT_FLAGS, 7, rsv1(0x1, HELLO) + rsv1(0x1, HELLO_AGAIN)),
    "hello_bfinal": (0, DEFAULT_FLAGS, 7, rsv1(0x1, bytes([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00]))),
    "hello_stored": (0, DEFAULT_FLAGS, 7, rsv1(0x1, bytes([0x00, 0x05, 0x00, 0xFA, 0xFF]) + b"Hello" + b"\x00")),
    "empty_messages": (0, DEFAULT_FLAGS, 7, rsv1(0x1, b"\x00") + rsv1(0x2, b"")),
    "json_fragmented": (3, DEFAULT_FLAGS, 7, rsv1(0x1, deflated(JSON)[:20], fin=False) + frame(0x9, b"p")
                        + frame(0x0, deflated(JSON)[20:])),
    "json_window_9_byte_at_a_time": (12, DEFAULT_FLAGS, 1, rsv1(0x1, deflated(JSON, 9, 9))),
    "mixed_plain_and_compressed": (2, DEFAULT_FLAGS, 7, frame(0x1, b"plain") + rsv1(0x2, deflated(bytes(300)))),
    "err_corrupt": (0, DEFAULT_FLAGS, 7, rsv1(0x2, b"\xff\xff\xff")),
    "err_zip_bomb": (0, DEFAULT_FLAGS, 7, rsv1(0x2, deflated(bytes(100000), 9))),
    "err_invalid_utf8": (0, DEFAULT_FLAGS, 7, rsv1(0x1, deflated(b"ok \xc3\x28 ok"))),
    "err_rsv1_on_continuation": (0, DEFAULT_FLAGS, 7, rsv1(0x1, HELLO[:3], fin=False) + rsv1(0x0, HELLO[3:])),
    "err_rsv1_on_ping": (0, DEFAULT_FLAGS, 7, rsv1(0x9, b"x")),
    "round_trip_json": (0, 0x00, ROUND_TRIP | 7, JSON),
    "round_trip_pieces_takeover": (5, 0x05 | (7 << 3), ROUND_TRIP | 0x08 | 7, JSON + bytes(range(256)) * 3),
    "round_trip_window_8": (4, 0x08, ROUND_TRIP | 0x08, JSON * 8 + bytes(range(256)) * 4),
    "round_trip_window_10_level_9": (6, 0x08 | (3 << 3), ROUND_TRIP | 2, bytes(i * 7 % 251 for i in range(5000))),
}

UTF8_SEEDS = {
    "ascii": (0, b"Hello, world! plain ASCII over the 16-byte fast path"),
    "two_byte": (3, "déjà vu".encode()),
    "three_byte": (1, "€ ₿ 中文".encode()),
    "four_byte": (2, "😀🎉".encode()),
    "max_scalar": (0, b"\xf4\x8f\xbf\xbf"),
    "boundaries": (5, b"\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xc2\x80\xdf\xbf"),
    "overlong_2": (0, b"\xc0\x80"),
    "overlong_3": (0, b"\xe0\x80\x80"),
    "overlong_4": (0, b"\xf0\x80\x80\x80"),
    "surrogate": (0, b"\xed\xa0\x80"),
    "above_max": (0, b"\xf4\x90\x80\x80"),
    "lead_f5": (0, b"\xf5\x80\x80\x80"),
    "fe_ff": (0, b"ab\xfe\xff"),
    "lone_continuation": (1, b"abc\x80def"),
    "truncated": (0, b"abc\xe2\x82"),
    "bad_after_fast_path": (4, b"a" * 33 + b"\xc3\x28"),
    "split_sequence": (1, b"x" * 15 + "€".encode() + b"y" * 15),
}

REQUEST = (
    b"GET /chat HTTP/1.1\r\n"
    b"Host: server.example.com\r\n"
    b"Upgrade: websocket\r\n"
    b"Connection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    b"Sec-WebSocket-Version: 13\r\n"
)


def request(extra=b"", drop=(), replace=None):
    lines = REQUEST.split(b"\r\n")[:-1]
    lines = [l for l in lines if not any(l.lower().startswith(d.lower()) for d in drop)]
    out = b"\r\n".join(lines) + b"\r\n" + extra + b"\r\n"
    if replace:
        out = out.replace(*replace)
    return out


HANDSHAKE_SEEDS = {
    "valid": request(),
    "valid_origin_protocol": request(b"Origin: https://app.example\r\nSec-WebSocket-Protocol: superchat, chat\r\n"),
    "valid_token_lists": request(replace=(b"Connection: Upgrade", b"Connection: keep-alive, Upgrade")),
    "post": request(replace=(b"GET", b"POST")),
    "http_1_0": request(replace=(b"HTTP/1.1", b"HTTP/1.0")),
    "no_host": request(drop=(b"Host",)),
    "plain_http": request(drop=(b"Upgrade", b"Connection")),
    "upgrade_h2c": request(replace=(b"Upgrade: websocket", b"Upgrade: h2c")),
    "no_connection_upgrade": request(replace=(b"Connection: Upgrade", b"Connection: keep-alive")),
    "version_12": request(replace=(b"Version: 13", b"Version: 12")),
    "no_version": request(drop=(b"Sec-WebSocket-Version",)),
    "no_key": request(drop=(b"Sec-WebSocket-Key",)),
    "short_key": request(replace=(b"dGhlIHNhbXBsZSBub25jZQ==", b"dGhlIHNhbXBsZQ==")),
    "bad_key": request(replace=(b"dGhlIHNhbXBsZSBub25jZQ==", b"dGhlIHNhbXBsZ*Bub25jZQ==")),
    "two_keys": request(b"Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n"),
    "origin_refused": request(b"Origin: http://evil.example\r\n"),
    "truncated": request()[:40],
    "garbage": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    "huge_header": b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n",
    "deflate_chromium": request(b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"),
    "deflate_every_parameter": request(b"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
                                       b"client_no_context_takeover; server_max_window_bits=12; "
                                       b"client_max_window_bits=9\r\n"),
    "deflate_offers_over_headers": request(b"Sec-WebSocket-Extensions: x-webkit-deflate-frame, permessage-deflate; "
                                           b"bogus\r\nSec-WebSocket-Extensions: permessage-deflate; "
                                           b'server_max_window_bits="8"\r\n'),
    "deflate_duplicate": request(b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits; "
                                 b"client_max_window_bits=10\r\n"),
    "deflate_malformed": request(b"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=\"10\r\n"),
    "token_in_query": request(replace=(b"GET /chat ", b"GET /chat?room=a&token=eyJ.x.y&b ")),
    "token_bearer": request(b"Authorization: Bearer  eyJ.x.y \r\n"),
    "token_other_scheme": request(b"Authorization: Basic dTpw\r\n", replace=(b"GET /chat ", b"GET /chat?token= ")),
    # Taken whole as a query, an item " token=x" (blank first) is a token too.
    "token_after_blank": request(b"X-Note: a& token=x\r\n"),
}


# --- link envelopes (proto/framegate/link.proto), protobuf encoded by hand ---

def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, value):
    return varint((number << 3) | 2) + varint(len(value)) + value


def envelope(number, body, version=1, length=None):
    """One framed Envelope whose oneof field `number` holds `body`."""
    payload = field_bytes(number, body)
    size = len(payload) if length is None else length
    return b"FG" + bytes([version, 0]) + size.to_bytes(4, "big") + payload


REGISTER = envelope(1, field_bytes(1, b"w1") + field_varint(2, 1234) + field_bytes(3, b"0.1.0")
                    + field_bytes(4, b"/echo") + field_bytes(4, b"/rooms"))
MESSAGE = envelope(4, field_varint(1, 7) + field_bytes(3, b"hello") + field_varint(4, 1))
SEND = envelope(6, field_varint(1, 1) + field_varint(1, 2) + field_varint(1, 3) + field_bytes(3, b'{"room":"r"}'))
ACK = envelope(9, field_varint(1, 42))
OPENED = envelope(3, field_varint(1, 9) + field_bytes(3, b"/rooms") + field_varint(9, 1)
                  + field_bytes(10, field_bytes(1, b"lobby")))
LINK_SEEDS = {
    "register": bytes([0]) + REGISTER,
    "message": bytes([3]) + MESSAGE,
    "send_many": bytes([5]) + SEND,
    "batch": bytes([7]) + REGISTER + MESSAGE + SEND + ACK + OPENED,
    "bad_magic": bytes([1]) + b"XG" + MESSAGE[2:],
    "bad_version": bytes([1]) + envelope(9, field_varint(1, 1), version=9),
    "too_large": bytes([1]) + envelope(9, field_varint(1, 1), length=1 << 30),
    "truncated": bytes([2]) + MESSAGE[:-3],
    "malformed": bytes([2]) + b"FG\x01\x00\x00\x00\x00\x03\xff\xff\xff",
}

# Envelope bodies for the fast readers: the forms encoders write and the
# ones they rarely do (unpacked and split ids, fields out of order, unknown
# fields, repeats), plus some they must decline.
PACKED_IDS = field_bytes(1, varint(1) + varint(300) + varint(1 << 63))
HOT_SEEDS = {
    "send_packed": field_bytes(6, PACKED_IDS + field_varint(2, 1) + field_bytes(3, b"\x00\xffhi")),
    "send_unpacked": field_bytes(6, field_varint(1, 5) + field_varint(1, 6) + field_bytes(3, b"x")),
    "send_mixed_out_of_order": field_bytes(6, field_bytes(3, b"old") + field_varint(1, 1) + PACKED_IDS
                                              + field_varint(2, 1) + field_bytes(3, b"new") + field_varint(2, 0)),
    "send_unknown_fields": field_varint(100, 1) + field_bytes(6, field_varint(9, 1) + PACKED_IDS
                                                              + varint((10 << 3) | 1) + bytes(8)
                                                              + varint((11 << 3) | 5) + bytes(4)),
    "send_twice": field_bytes(6, field_varint(1, 1)) + field_bytes(6, field_varint(1, 2)),
    "send_group": field_bytes(6, varint((20 << 3) | 3) + varint((20 << 3) | 4)),
    "send_truncated_ids": field_bytes(6, b"\x0a\x02\x81\x81"),
    "send_empty": field_bytes(6, b""),
    "message": field_bytes(4, field_varint(1, 7) + field_varint(2, 1) + field_bytes(3, b"hello") + field_varint(4, 9)),
    "message_out_of_order": field_bytes(4, field_varint(4, 9) + field_bytes(3, b"a") + field_varint(1, 7)
                                           + field_bytes(3, b"bc")),
    "ack": field_bytes(9, field_varint(1, 42)),
    "known_and_send": field_bytes(9, field_varint(1, 1)) + field_bytes(6, field_varint(1, 1)),
    # A publisher's compression (deflated_prefix, deflated_covers): used, beyond the payload, of the wrong type.
    "send_deflated": field_bytes(6, PACKED_IDS + field_bytes(3, b'{"a":1}') + field_bytes(4, b"\xaa\x56\x4a\x04\x00")
                                    + field_varint(5, 6)),
    "send_deflated_covers_past": field_bytes(6, PACKED_IDS + field_bytes(3, b"{}") + field_bytes(4, b"\x00")
                                                + field_varint(5, 3)),
    "send_deflated_varint": field_bytes(6, PACKED_IDS + field_varint(4, 1)),
}


ROOMS_SEEDS = {
    "join": b'{"op":"join","room":"lobby"}',
    "leave": b'{"op":"leave","room":"lobby"}',
    "publish_object": b'{"op":"publish","room":"r","data":{"text":"hi \\u00e9","n":[1,2.50,true,null]}}',
    "publish_string": b'{"room":"r","data":"x","op":"publish"}',
    "escaped_room": b'{"op":"join","room":"\\u0072\\ud83d\\ude00"}',
    "lone_surrogate": b'{"op":"join","room":"\\ud800"}',
    "duplicate_members": b'{"op":"join","op":"leave","room":"a","room":"b"}',
    "deep": b'{"op":"publish","room":"r","data":' + b"[" * 200 + b"]" * 200 + b"}",
    "long_room": b'{"op":"join","room":"' + b"x" * 257 + b'"}',
    "unknown_op": b'{"op":"shout","room":"r"}',
    "not_object": b'["op","join"]',
    "bad_json": b'{"op":"join","room":',
}

PUBLISH_SEEDS = {
    "one": b'{"room":"lobby","data":{"hi":1}}',
    "batch": b'{"messages":[{"room":"a","data":1},{"room":"b","data":[2.50]}]}',
    "empty_batch": b'{"messages":[]}',
    "bad_member": b'{"messages":[{"room":"a","data":1},{"room":7,"data":2}]}',
    "no_data": b'{"room":"a"}',
    "escaped": b'{"room":"\\u0061\\n","data":"\\u0000"}',
    "bad_json": b'{"room":"a","data":}',
    "whitespace": b' \t\n{ "room" : "a" , "data" : 1 }\n',
}


def jwt(header, payload, signature=b"sig"):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=")
    return b64(header) + b"." + b64(payload) + b"." + b64(signature)


JWT_SEEDS = {
    "hs256": jwt(b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"alice","exp":1700000060}', bytes(32)),
    "es256_kid": jwt(b'{"alg":"ES256","kid":"e1"}', b'{"sub":"a","aud":["x","y"],"nbf":1.5}', bytes(64)),
    "eddsa_rooms": jwt(b'{"alg":"EdDSA"}', b'{"sub":"a","rooms":["lobby","team-*"],"iss":"i"}', bytes(64)),
    "alg_none": jwt(b'{"alg":"none"}', b'{"sub":"a"}', b""),
    "crit": jwt(b'{"alg":"RS256","crit":["exp"]}', b'{"sub":"a"}'),
    "bad_claim": jwt(b'{"alg":"HS512"}', b'{"sub":"a","exp":"soon"}'),
    "padding": b"eyJhbGciOiJIUzI1NiJ9.e30=.c2ln",
    "two_parts": b"eyJhbGciOiJIUzI1NiJ9.e30",
    "jwe": b"a.b.c.d.e",
}


def redis_header(origin, seq):
    return b"fg1 %016x %016x\n" % (origin, seq)


def signed_envelope(origin, seq, payload, key=b"fuzz", channel=b"framegate:room:R"):
    prefix = b"fg2 %016x %016x" % (origin, seq)
    mac = hmac.new(key, channel + b"\x00" + prefix + payload, hashlib.sha256).hexdigest().encode()
    return prefix + b" " + mac + b"\n" + payload


def deflated_prefix(payload):
    """A publisher's compression (--publish-deflate): raw DEFLATE of all but the last byte, sync-flushed, tail cut."""
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    data = z.compress(payload[:-1]) + z.flush(zlib.Z_SYNC_FLUSH)
    return data[:-4], len(payload) - 1


def segment_body(payload, segment=None, covers=None):
    seg, cov = deflated_prefix(payload)
    seg = seg if segment is None else segment
    cov = cov if covers is None else covers
    return b"%08x%08x" % (len(seg), cov) + seg + payload


def compressed_envelope(origin, seq, payload, **kw):
    return b"fg3 %016x %016x\n" % (origin, seq) + segment_body(payload, **kw)


def compressed_signed_envelope(origin, seq, payload, key=b"fuzz", channel=b"framegate:room:R"):
    prefix = b"fg4 %016x %016x" % (origin, seq)
    body = segment_body(payload)
    mac = hmac.new(key, channel + b"\x00" + prefix + body, hashlib.sha256).hexdigest().encode()
    return prefix + b" " + mac + b"\n" + body


BIG_JSON = b'{"room":"R","data":[' + b",".join(b'{"id":%d,"name":"member"}' % i for i in range(40)) + b"]}"

HEX_JSON = b'{"room":"R","data":"' + b"".join(hashlib.sha256(b"%d" % i).hexdigest().encode() for i in range(8))[:480] + b'"}'

REDIS_SEEDS = {
    "framegate": b"\x00" + redis_header(0xFEDCBA9876543210, 42) + b'{"room":"R","data":1}',
    "empty_payload": b"\x00" + redis_header(1, 1),
    "forged_max_seq": b"\x00" + redis_header(7, 0xFFFFFFFFFFFFFFFF) + b"{}",
    "too_big": b"\x02" + redis_header(1, 2) + b"0123456789",
    "invalid_utf8": b"\x00" + redis_header(1, 3) + b"caf\xc3",
    "foreign_drop": b"\x00" + b'{"room":"R","data":0}',
    "foreign_deliver": b"\x01" + b'{"room":"R","data":0}',
    "foreign_bad_utf8": b"\x01" + b"\xff\xfe",
    "upper_hex": b"\x00" + b"fg1 FEDCBA9876543210 000000000000002a\n{}",
    "short_header": b"\x00" + b"fg1 0000000000000001 00000000000001\n",
    "bad_separator": b"\x00" + b"fg1 0000000000000001-0000000000000001\n",
    "other_version": b"\x00" + b"fg3 0000000000000001 0000000000000001\n",
    "signed": b"\x10" + signed_envelope(5, 9, b'{"room":"R","data":2}'),
    "signed_without_secret": b"\x00" + signed_envelope(5, 9, b"{}"),
    "signed_bad_mac": b"\x10" + signed_envelope(5, 9, b"{}")[:-2] + b"[]",
    "unsigned_with_secret": b"\x10" + redis_header(5, 9) + b"{}",
    "signed_short": b"\x10" + signed_envelope(5, 9, b"")[:-2],
    "compressed": b"\x00" + compressed_envelope(3, 4, BIG_JSON),
    "compressed_signed": b"\x10" + compressed_signed_envelope(3, 4, BIG_JSON),
    "compressed_signed_without_secret": b"\x00" + compressed_signed_envelope(3, 4, BIG_JSON),
    # Limit 512 (flags n = 7): the payload fits, the payload and its segment do not.
    "compressed_fits_without_its_segment": b"\x0e" + compressed_envelope(3, 5, HEX_JSON),
    "compressed_covers_past_payload": b"\x00" + compressed_envelope(3, 6, BIG_JSON, covers=len(BIG_JSON) + 1),
    "compressed_empty_segment": b"\x00" + compressed_envelope(3, 7, BIG_JSON, segment=b""),
    "compressed_segment_past_end": b"\x00" + b"fg3 %016x %016x\n" % (3, 8) + b"%08x%08x" % (99, 0) + b"{}",
    "unknown_version": b"\x00" + b"fg5 0000000000000001 0000000000000001\n{}",
}


def bulk(s):
    return b"$%d\r\n%s\r\n" % (len(s), s)


def resp(*items):
    """A RESP2 array of already encoded items; ints become integer replies."""
    out = b"*%d\r\n" % len(items)
    for item in items:
        out += b":%d\r\n" % item if isinstance(item, int) else item
    return out


def shards_node(port, role=b"master", health=b"online", endpoint=b"127.0.0.1", extra=()):
    return resp(bulk(b"id"), bulk(b"%040x" % port), bulk(b"port"), port, bulk(b"ip"), bulk(b"127.0.0.1"),
                bulk(b"endpoint"), bulk(endpoint), *extra, bulk(b"role"), bulk(role), bulk(b"replication-offset"),
                42, bulk(b"health"), bulk(health))


def shards_shard(ranges, *nodes):
    return resp(bulk(b"slots"), resp(*ranges), bulk(b"nodes"), resp(*nodes))


def slots_node(port, endpoint=b"127.0.0.1", metadata=()):
    return resp(bulk(endpoint), port, bulk(b"%040x" % port), resp(*metadata))


def captured_replies():
    """The real redis-server 7.0.15 replies of the unit test, as sent."""
    path = os.path.join(HERE, "..", "unit", "worker", "broker", "cluster_captures.hpp")
    with open(path, encoding="ascii") as f:
        text = f.read()
    found = re.findall(r'std::string_view (\w+) = R"\((.*?)\)";', text, re.S)
    return {"captured_" + name: body.encode().replace(b"\n", b"\r\n") for name, body in found}


CLUSTER_SEEDS = {
    **captured_replies(),
    "shards_two": resp(shards_shard((0, 8191), shards_node(7000), shards_node(7001, b"replica")),
                       shards_shard((8192, 16383), shards_node(7002, health=b"fail"), shards_node(7003))),
    "shards_endpoints": resp(shards_shard((0, 0, 5, 9), shards_node(7000, endpoint=b"?")),
                             shards_shard((1, 1), shards_node(7001, endpoint=b"", extra=(bulk(b"hostname"), bulk(b"h")))),
                             shards_shard((), shards_node(7002, health=b"loading"))),
    "shards_overlap": resp(shards_shard((0, 10), shards_node(7000)), shards_shard((10, 20), shards_node(7001))),
    "slots_merged": resp(resp(0, 99, slots_node(7000), slots_node(7001)), resp(100, 199, slots_node(7002)),
                         resp(200, 16383, slots_node(7000), slots_node(7001))),
    "slots_endpoints": resp(resp(0, 0, resp(b"$-1\r\n", 7000)),
                            resp(1, 1, slots_node(7001, b"?", (bulk(b"ip"), bulk(b"10.0.0.1")))),
                            resp(2, 2, slots_node(7002, b"", (bulk(b"hostname"), bulk(b"redis-c"))))),
    "redirects": b"-MOVED 3999 127.0.0.1:6381\r\n-ASK 3999 127.0.0.1:6381\r\n-MOVED 1 ::1:7000\r\n-MOVED 16383 :7000\r\n",
    "errors": b"-CROSSSLOT Keys in request don't hash to the same slot\r\n-TRYAGAIN\r\n-CLUSTERDOWN\r\n",
    "keys": resp(bulk(b"{user1000}.following"), bulk(b"foo{}{bar}"), bulk(b"foo{{bar}}zap"), bulk(b"foo{bar}{zap}")),
    "nested_error": resp(b"-MOVED 12182 10.0.0.1:7000\r\n", 5, b"+OK\r\n"),
}


# Request targets for --static-dir: what is served, and the ways out of it.
STATIC_SEEDS = {
    "root": b"/",
    "file_with_query": b"/app.js?v=2#top",
    "sub_index": b"/sub/",
    "upper_case_type": b"/sub/Style.CSS",
    "inside_symlink": b"/sub/alias.js",
    "escaped": b"/%61pp.js",
    "dot_dot": b"/../outside.js",
    "escaped_dot_dot": b"/%2e%2e/outside.js",
    "escaped_slash": b"/sub%2f..%2f..%2foutside.js",
    "symlink_out": b"/escape.js",
    "symlink_dir_out": b"/up/outside.js",
    "hidden": b"/.hidden.js",
    "unknown_type": b"/notes.secret",
    "too_big": b"/big.txt",
    "nul": b"/app.js%00.html",
    "bad_escape": b"/app%2",
    "not_absolute": b"app.js",
    "double_slash": b"//sub//index.html",
}


# PROXY protocol headers (HAProxy's proxy-protocol.txt) before an HTTP request.
PROXY_V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
HTTP_GET = b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"


def proxy_v2(ver_cmd, family, body, length=None):
    """A version 2 header; `length` overrides the announced length."""
    length = len(body) if length is None else length
    return PROXY_V2_SIGNATURE + bytes([ver_cmd, family]) + struct.pack(">H", length) + body


PROXY_V2_TCP4 = bytes([192, 0, 2, 1, 198, 51, 100, 2]) + struct.pack(">HH", 56324, 443)
PROXY_V2_TCP6 = (bytes.fromhex("20010db8000000000000000000000001") + bytes.fromhex("20010db8000000000000000000000002")
                 + struct.pack(">HH", 56324, 443))
PROXY_V2_UNIX = b"/run/client.sock".ljust(108, b"\x00") + b"/run/gate.sock".ljust(108, b"\x00")
PROXY_V2_TLVS = b"\x04\x00\x03\x00\x00\x00" + b"\x02\x00\x0bexample.com" + b"\xea\x00\x05\x01vpce"

PROXY_SEEDS = {
    "v1_tcp4": b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n" + HTTP_GET,
    "v1_tcp6": b"PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n" + HTTP_GET,
    "v1_unknown": b"PROXY UNKNOWN\r\n" + HTTP_GET,
    "v1_unknown_longest": b"PROXY UNKNOWN %s %s 65535 65535\r\n" % (b":".join([b"ffff"] * 8), b":".join([b"ffff"] * 8)),
    "v1_bad_port": b"PROXY TCP4 192.0.2.1 198.51.100.2 080 443\r\n" + HTTP_GET,
    "v1_no_crlf": b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n" + HTTP_GET,
    "v2_tcp4": proxy_v2(0x21, 0x11, PROXY_V2_TCP4) + HTTP_GET,
    "v2_tcp6": proxy_v2(0x21, 0x21, PROXY_V2_TCP6) + HTTP_GET,
    "v2_tcp4_tlvs": proxy_v2(0x21, 0x11, PROXY_V2_TCP4 + PROXY_V2_TLVS) + HTTP_GET,
    "v2_local": proxy_v2(0x20, 0x00, b"") + HTTP_GET,
    "v2_unix": proxy_v2(0x21, 0x31, PROXY_V2_UNIX),
    "v2_too_short": proxy_v2(0x21, 0x21, PROXY_V2_TCP4) + HTTP_GET,
    "v2_too_long": proxy_v2(0x21, 0x11, PROXY_V2_TCP4, length=0x0801),
    "not_proxy": HTTP_GET,
    # libFuzzer's first find: inet_pton stopped at a NUL and the line passed.
    "v1_nul_in_address": b"PROXY TCP4 192.0.2.1\x00 198.51.100.2 56324 443\r\n" + HTTP_GET,
    "v2_local_short": proxy_v2(0x20, 0x11, b"") + HTTP_GET,
    "v2_inet_unspec_transport": proxy_v2(0x21, 0x10, PROXY_V2_TCP4) + HTTP_GET,
}

# X-Forwarded-For (flags 0) and Forwarded (flags 1) values, lines split by \n.
FORWARDED_SEEDS = {
    "xff_one": b"\x00203.0.113.7",
    "xff_chain": b"\x00192.0.2.66, 203.0.113.7, 192.0.2.9",
    "xff_ports_v6": b"\x00[2001:db8::5]:6000, 203.0.113.7:5000, 2001:db8::9",
    "xff_lines": b"\x00203.0.113.7\n192.0.2.2, 192.0.2.9",
    "xff_garbage": b"\x00unknown, ,garbage!, \"oops, 203.0.113.7",
    "xff_long": b"\x00" + b", ".join(b"192.0.2.%d" % i for i in range(1, 41)),
    "rfc7239": b"\x01for=192.0.2.60;proto=http;by=203.0.113.43, for=\"[2001:db8:cafe::17]:4711\"",
    "rfc7239_hidden": b"\x01for=_hidden, for=unknown;by=192.0.2.1, for=203.0.113.7",
    "rfc7239_quotes": b"\x01by=\"a;for=192.0.2.9\";for=203.0.113.7, for=\"oops, for=192.0.2.3",
    "rfc7239_twice": b"\x01for=203.0.113.7;for=203.0.113.8\nFOR = 192.0.2.4 ; proto=https",
}


def write_corpus(name, seeds):
    directory = os.path.join(HERE, "corpus", name)
    os.makedirs(directory, exist_ok=True)
    for seed_name, content in seeds.items():
        with open(os.path.join(directory, seed_name), "wb") as f:
            f.write(content)
    print(f"{name}: {len(seeds)} seeds in {os.path.relpath(directory)}")


def main():
    write_corpus("frame_parser", {k: bytes([s, fl]) + data for k, (s, fl, data) in FRAME_SEEDS.items()})
    write_corpus("inflate", {k: bytes([s, fl, mode]) + data for k, (s, fl, mode, data) in INFLATE_SEEDS.items()})
    write_corpus("utf8", {k: bytes([s]) + data for k, (s, data) in UTF8_SEEDS.items()})
    write_corpus("handshake", HANDSHAKE_SEEDS)
    write_corpus("link_envelope", LINK_SEEDS)
    write_corpus("hot_envelopes", HOT_SEEDS)
    write_corpus("rooms_request", ROOMS_SEEDS)
    write_corpus("publish_request", PUBLISH_SEEDS)
    write_corpus("redis_inbound", REDIS_SEEDS)
    write_corpus("jwt_token", JWT_SEEDS)
    write_corpus("cluster_reply", CLUSTER_SEEDS)
    write_corpus("static_files", STATIC_SEEDS)
    write_corpus("proxy_header", PROXY_SEEDS)
    write_corpus("forwarded_for", FORWARDED_SEEDS)


if __name__ == "__main__":
    main()
