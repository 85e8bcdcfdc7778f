#!/usr/bin/env python3
"""Writes N signed JWTs, one per line, for the handshake benchmark
(framegate-loadgen --token-file). Standard library plus the openssl command
line: HS256 is an HMAC here; ES256 signs with `openssl dgst -sha256 -sign`
and turns its DER signature into the raw r||s that JWS wants (RFC 7518 §3.4).

Usage: make_tokens.py hs256 SECRET_FILE N OUT
       make_tokens.py es256 PRIVATE_KEY_PEM N OUT
Each token has sub "user<i>" and exp an hour ahead."""
import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def der_to_raw(der):
    """ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } to 32-byte r || 32-byte s."""
    assert der[0] == 0x30
    i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    out = b""
    for _ in range(2):
        assert der[i] == 0x02
        n = der[i + 1]
        out += der[i + 2:i + 2 + n].lstrip(b"\0").rjust(32, b"\0")
        i += 2 + n
    return out


def main():
    alg, key_file, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    header = b64url(json.dumps({"alg": alg.upper(), "typ": "JWT"}, separators=(",", ":")).encode())
    exp = int(time.time()) + 3600
    secret = open(key_file, "rb").read().rstrip(b"\n") if alg == "hs256" else None
    with open(out, "w") as f:
        for i in range(n):
            payload = b64url(json.dumps({"sub": f"user{i}", "exp": exp}, separators=(",", ":")).encode())
            signing_input = f"{header}.{payload}".encode()
            if alg == "hs256":
                sig = hmac.new(secret, signing_input, hashlib.sha256).digest()
            else:
                der = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key_file], input=signing_input,
                                     capture_output=True, check=True).stdout
                sig = der_to_raw(der)
            f.write(f"{header}.{payload}.{b64url(sig)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
