"""Authentication at the handshake (--jwt-*), end to end.

A gateway with each kind of key (HMAC secret, PEM public key, JWKS) and
two workers serving /whoami: valid tokens get 101 and the worker sees the
token's sub as the user; every kind of bad token gets 401 with its reason;
--sticky-key user puts one user's connections on one worker; a failover
keeps the user; an expiring token closes the connection with 4001; SIGHUP
reloads the keys. Tokens are signed here with `cryptography`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from framegate_harness import (DEFAULT_WORKER_BIN, OP_CLOSE, OP_TEXT, REGISTERED_RE, GatewayProcess, Process,
                               gateway_binary, scrape_metrics)

WORKER_BIN = os.environ.get("FRAMEGATE_WORKER_BIN") or DEFAULT_WORKER_BIN
SECRET = b"s" * 32


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(sub: str = "alice", ttl: float = 300, **extra) -> dict:
    c = {"sub": sub, "exp": int(time.time() + ttl)}
    c.update(extra)
    return {k: v for k, v in c.items() if v is not None}


def token(alg: str, key, payload: dict, kid: str | None = None, header: dict | None = None) -> str:
    h = {"alg": alg, "typ": "JWT"}
    if kid:
        h["kid"] = kid
    h.update(header or {})
    signing_input = (b64(json.dumps(h).encode()) + "." + b64(json.dumps(payload).encode())).encode()
    if alg.startswith("HS"):
        digest = {"HS256": hashes.SHA256(), "HS384": hashes.SHA384(), "HS512": hashes.SHA512()}[alg]
        mac = hmac.HMAC(key, digest)
        mac.update(signing_input)
        sig = mac.finalize()
    elif alg == "RS256":
        sig = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    elif alg == "ES256":
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    elif alg == "EdDSA":
        sig = key.sign(signing_input)
    else:
        sig = b""
    return signing_input.decode() + "." + b64(sig)


def public_pem(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def jwk(key, kid: str) -> dict:
    pub = key.public_key()
    if isinstance(pub, rsa.RSAPublicKey):
        n = pub.public_numbers()
        return {"kty": "RSA", "kid": kid, "n": b64(n.n.to_bytes((n.n.bit_length() + 7) // 8, "big")),
                "e": b64(n.e.to_bytes((n.e.bit_length() + 7) // 8, "big"))}
    if isinstance(pub, ec.EllipticCurvePublicKey):
        n = pub.public_numbers()
        return {"kty": "EC", "crv": "P-256", "kid": kid, "x": b64(n.x.to_bytes(32, "big")),
                "y": b64(n.y.to_bytes(32, "big"))}
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64(raw)}


class Cluster:
    """One gateway (1 thread, admin on a free port) and `workers` workers with the test apps."""

    def __init__(self, test: unittest.TestCase, gateway_args: list[str], workers: int = 2):
        self.link_dir = tempfile.mkdtemp(prefix="fg-auth-")
        test.addCleanup(shutil.rmtree, self.link_dir, True)
        self.gateway = GatewayProcess(["--link-dir", self.link_dir, "--admin", "127.0.0.1:0", *gateway_args],
                                      echo=False)
        self.gateway.start()
        test.addCleanup(self.gateway.stop)
        self.workers: dict[str, Process] = {}
        for i in range(1, workers + 1):
            w = Process([WORKER_BIN, "--id", f"w{i}", "--link-dir", self.link_dir, "--enable-test-apps"],
                        name=f"framegate-worker w{i}", strip_env_prefixes=("FRAMEGATE_",))
            w.start()
            test.addCleanup(w.stop)
            self.workers[f"w{i}"] = w
        self.gateway.wait_for(REGISTERED_RE, count=workers, timeout=15)

    def handshake(self, path: str = "/whoami", headers: dict | None = None):
        client = self.gateway.client(timeout=10)
        return client, client.request_handshake(path, headers)

    def whoami(self, client) -> dict:
        client.send_text("?")
        frame = client.recv_frame(timeout=10)
        if frame.opcode != OP_TEXT:
            raise AssertionError(f"expected a text reply, got {frame.describe()}")
        return json.loads(frame.payload)


class AuthTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="fg-auth-keys-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def write(self, name: str, data: bytes | str) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.chmod(path, 0o600)
        return path

    def assert_accepted(self, cluster: Cluster, tok: str, user: str = "alice", via_header: bool = False) -> dict:
        path, headers = ("/whoami", {"Authorization": f"Bearer {tok}"}) if via_header else (
            f"/whoami?room=r&token={tok}", None)
        client, response = cluster.handshake(path, headers)
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101, response.describe())
        info = cluster.whoami(client)
        self.assertEqual(info["user"], user)
        return info

    def assert_refused(self, cluster: Cluster, tok: str | None, reason: str) -> None:
        path = "/whoami" if tok is None else f"/whoami?token={tok}"
        client, response = cluster.handshake(path)
        client.close()
        self.assertEqual(response.status, 401, response.describe())
        self.assertEqual(response.body.decode().strip(), reason)
        challenge = response.header("WWW-Authenticate") or ""
        self.assertTrue(challenge.startswith("Bearer "), challenge)
        if tok is None:
            self.assertNotIn("error=", challenge)
        else:
            self.assertIn('error="invalid_token"', challenge)


class KeyKindsTest(AuthTestCase):
    def test_hmac_secret(self) -> None:
        # Header room for the oversize token, so that the verifier is what refuses it.
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET + b"\n"), "--jwt-leeway", "0",
                                 "--max-header-bytes", "16384"])
        for alg in ("HS256", "HS384", "HS512"):
            info = self.assert_accepted(cluster, token(alg, SECRET, claims()))
            self.assertEqual(info["query"], "room=r", "the token is not handed on to workers")
        self.assert_accepted(cluster, token("HS256", SECRET, claims(sub="bob")), user="bob", via_header=True)

        self.assert_refused(cluster, None, "missing token: send ?token= or Authorization: Bearer")
        self.assert_refused(cluster, token("HS256", b"t" * 32, claims()), "token signature does not verify")
        self.assert_refused(cluster, token("HS256", SECRET, claims(ttl=-10)), "token expired")
        self.assert_refused(cluster, token("HS256", SECRET, claims(nbf=int(time.time()) + 600)),
                            "token not yet valid")
        self.assert_refused(cluster, "abc.def", "malformed token")
        self.assert_refused(cluster, token("none", b"", claims()), "token algorithm not accepted")
        self.assert_refused(cluster, token("HS256", SECRET, claims(sub=None)), "token has no sub")
        self.assert_refused(cluster, "a" * 9000, "token too large")

        metrics = scrape_metrics(cluster.gateway)
        for reason, n in (("missing_token", 1), ("bad_signature", 1), ("expired", 1), ("not_yet_valid", 1),
                          ("malformed", 1), ("unsupported_algorithm", 1), ("missing_subject", 1),
                          ("too_large", 1), ("wrong_issuer", 0), ("wrong_audience", 0), ("unknown_key", 0)):
            self.assertEqual(metrics[f'framegate_gateway_auth_refusals_total{{reason="{reason}"}}'], n, reason)
        self.assertEqual(metrics['framegate_gateway_handshakes_refused_total{status="401"}'], 8)

    def test_pem_public_keys(self) -> None:
        generators = {"RS256": lambda: rsa.generate_private_key(65537, 2048),
                      "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
                      "EdDSA": ed25519.Ed25519PrivateKey.generate}
        for alg, generate in generators.items():
            with self.subTest(alg=alg):
                key, other = generate(), generate()
                cluster = Cluster(self, ["--jwt-public-key-file", self.write(f"{alg}.pem", public_pem(key))],
                                  workers=1)
                self.assert_accepted(cluster, token(alg, key, claims()))
                self.assert_accepted(cluster, token(alg, key, claims()), via_header=True)
                self.assert_refused(cluster, token(alg, other, claims()), "token signature does not verify")
                # HS256 keyed with the public key's PEM: never accepted.
                self.assert_refused(cluster, token("HS256", public_pem(key), claims()),
                                    "no key for this token's algorithm and kid")

    def test_jwks_issuer_and_audience(self) -> None:
        rsa_key = rsa.generate_private_key(65537, 2048)
        ec_key = ec.generate_private_key(ec.SECP256R1())
        ed_key = ed25519.Ed25519PrivateKey.generate()
        jwks = {"keys": [jwk(rsa_key, "r1"), jwk(ec_key, "e1"), jwk(ed_key, "d1")]}
        cluster = Cluster(self, ["--jwt-jwks-file", self.write("jwks.json", json.dumps(jwks)),
                                 "--jwt-issuer", "https://id.example", "--jwt-audience", "chat"], workers=1)
        good = {"iss": "https://id.example", "aud": ["web", "chat"]}
        self.assert_accepted(cluster, token("RS256", rsa_key, claims(**good), kid="r1"))
        self.assert_accepted(cluster, token("ES256", ec_key, claims(**good), kid="e1"))
        self.assert_accepted(cluster, token("EdDSA", ed_key, claims(iss="https://id.example", aud="chat"), kid="d1"))
        self.assert_refused(cluster, token("RS256", rsa_key, claims(**good), kid="r9"),
                            "no key for this token's algorithm and kid")
        self.assert_refused(cluster, token("ES256", ec_key, claims(iss="https://other", aud="chat"), kid="e1"),
                            "token issuer not accepted")
        self.assert_refused(cluster, token("ES256", ec_key, claims(iss="https://id.example", aud="web"), kid="e1"),
                            "token audience not accepted")

    def test_allow_anonymous_lets_only_tokenless_requests_in(self) -> None:
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET), "--allow-anonymous"], workers=1)
        client, response = cluster.handshake("/whoami")
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101, response.describe())
        self.assertEqual(cluster.whoami(client)["user"], "")
        self.assert_refused(cluster, token("HS256", b"t" * 32, claims()), "token signature does not verify")
        self.assert_accepted(cluster, token("HS256", SECRET, claims(rooms=["lobby", "team-*"])))

    def test_without_a_key_tokens_are_ignored(self) -> None:
        cluster = Cluster(self, [], workers=1)
        client, response = cluster.handshake("/whoami?token=garbage")
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101, response.describe())
        info = cluster.whoami(client)
        self.assertEqual(info["user"], "")
        self.assertEqual(info["query"], "token=garbage")

    def test_configuration_errors_exit_2(self) -> None:
        short = self.write("short", b"tooshort")
        env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMEGATE_")}
        for args in (["--jwt-secret-file", short], ["--jwt-secret-file", os.path.join(self.dir, "absent")],
                     ["--jwt-public-key-file", self.write("bad.pem", "not a key")],
                     ["--jwt-jwks-file", self.write("bad.json", '{"keys":[]}')],
                     ["--sticky-key", "user"], ["--allow-anonymous"],
                     ["--jwt-secret-file", self.write("s", SECRET), "--jwt-leeway", "-1"]):
            with self.subTest(args=args):
                done = subprocess.run([gateway_binary(), "--listen", "127.0.0.1:0", "--echo", "--admin", "off",
                                       *args], capture_output=True, text=True, timeout=15, env=env)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertNotIn("tooshort", done.stderr, "a secret never appears in an error")


class ConnectionLifeTest(AuthTestCase):
    def test_rooms_claim_reaches_the_worker(self) -> None:
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET)], workers=1)
        info = self.assert_accepted(cluster, token("HS256", SECRET, claims(rooms=["lobby", "team-*"])))
        self.assertTrue(info["rooms_restricted"])
        self.assertEqual(info["rooms_allowed"], ["lobby", "team-*"])
        info = self.assert_accepted(cluster, token("HS256", SECRET, claims()))
        self.assertFalse(info["rooms_restricted"])
        self.assertEqual(info["rooms_allowed"], [])

    def test_rooms_claim_limits_joins_and_publishes(self) -> None:
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET)], workers=1)
        tok = token("HS256", SECRET, claims(rooms=["lobby", "team-*"]))
        client, response = cluster.handshake(f"/rooms?token={tok}")
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101, response.describe())

        def answer(text: str) -> dict:
            client.send_text(text)
            return json.loads(client.recv_frame(timeout=10).payload)

        for room in ("secret", "team", "lobby2"):
            reply = answer(json.dumps({"op": "join", "room": room, "recover": True}))
            self.assertTrue(reply.get("error", "").startswith("forbidden: "), reply)
            reply = answer(json.dumps({"op": "publish", "room": room, "data": 1}))
            self.assertTrue(reply.get("error", "").startswith("forbidden: "), reply)
        for room in ("lobby", "team-a"):
            self.assertEqual(answer(json.dumps({"op": "join", "room": room, "recover": True}))["joined"], room)
            self.assertEqual(answer(json.dumps({"op": "publish", "room": room, "data": 7}))["data"], 7)

    def test_sticky_user_and_failover_keep_the_user(self) -> None:
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET), "--sticky-key", "user"])
        placed: dict[str, set[str]] = {}
        clients = {}
        for user in ("alice", "bob", "carol", "dave", "erin", "frank"):
            for i in range(3):
                info = self.assert_accepted(cluster, token("HS256", SECRET, claims(sub=user, n=i)), user=user)
                self.assertEqual(info["sticky_key"], user)
                placed.setdefault(user, set()).add(info["worker"])
        for user, workers in placed.items():
            self.assertEqual(len(workers), 1, f"{user}'s connections spread over {workers}")
        self.assertEqual(len(set().union(*placed.values())), 2, f"six users all on one worker: {placed}")

        # A connection of a user on w1 moves to w2 when w1 dies, and keeps its user.
        user = next(u for u, w in placed.items() if w == {"w1"})
        client, response = cluster.handshake(f"/whoami?token={token('HS256', SECRET, claims(sub=user))}")
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101)
        self.assertEqual(cluster.whoami(client)["worker"], "w1")
        cluster.workers["w1"].kill()
        deadline = time.monotonic() + 20
        while True:
            info = cluster.whoami(client)
            if info["worker"] == "w2":
                break
            self.assertLess(time.monotonic(), deadline, "the connection never moved to w2")
            time.sleep(0.1)
        self.assertTrue(info["resumed"])
        self.assertEqual(info["user"], user)

    def test_expiry_closes_with_4001(self) -> None:
        cluster = Cluster(self, ["--jwt-secret-file", self.write("secret", SECRET), "--jwt-leeway", "0"], workers=1)
        client, response = cluster.handshake(f"/whoami?token={token('HS256', SECRET, claims(ttl=2))}")
        self.addCleanup(client.close)
        self.assertEqual(response.status, 101)
        # A long-lived token's connection on the same gateway is not touched.
        other, response = cluster.handshake(f"/whoami?token={token('HS256', SECRET, claims(ttl=600))}")
        self.addCleanup(other.close)
        self.assertEqual(response.status, 101)
        frame = client.recv_frame(timeout=15)
        self.assertEqual(frame.opcode, OP_CLOSE, frame.describe())
        self.assertEqual(frame.close_code, 4001)
        self.assertEqual(frame.close_reason, b"token expired")
        self.assertEqual(cluster.whoami(other)["user"], "alice")
        self.assertEqual(scrape_metrics(cluster.gateway)["framegate_gateway_auth_expired_closes_total"], 1)

    def test_sighup_reloads_the_keys(self) -> None:
        path = self.write("secret", SECRET)
        cluster = Cluster(self, ["--jwt-secret-file", path], workers=1)
        old = token("HS256", SECRET, claims())
        self.assert_accepted(cluster, old)
        new_secret = b"n" * 48
        self.write("secret", new_secret)
        cluster.gateway.send_signal(signal.SIGHUP)
        cluster.gateway.wait_for(r"token keys reloaded", timeout=10)
        self.assert_refused(cluster, old, "token signature does not verify")
        self.assert_accepted(cluster, token("HS256", new_secret, claims()))
        # A reload that fails keeps the keys in use.
        self.write("secret", b"short")
        cluster.gateway.send_signal(signal.SIGHUP)
        cluster.gateway.wait_for(r"token keys not reloaded", timeout=10)
        self.assertTrue(cluster.gateway.is_running())
        self.assert_accepted(cluster, token("HS256", new_secret, claims()))
        metrics = scrape_metrics(cluster.gateway)
        self.assertEqual(metrics['framegate_gateway_auth_key_reloads_total{result="ok"}'], 1)
        self.assertEqual(metrics['framegate_gateway_auth_key_reloads_total{result="failed"}'], 1)


if __name__ == "__main__":
    unittest.main()
