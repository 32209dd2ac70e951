"""Operator-issued identity over real websockets (SPEC "Identity", server/auth.py).

Live servers started with each kind of key file (an HS256 secret, an RS256
and an ES256 PEM public key, a JWKS of two keys chosen by ``kid``) accept
their tokens as the player whose public id derives from ``iss`` and ``sub``;
forged, expired, early, wrongly addressed, ``alg: none``, key-confused,
garbage and oversized tokens get ``bad_auth`` with the reason; a server
without a key refuses every token; ``--require-auth`` refuses guests (with the
request's ``re``) while resume tokens of identified players still work; two
connections of one ``sub`` are one player at a table; a renamed player keeps
its chosen name at its next ``hello`` with a token; two nodes on one Redis
both take the token as one player. The keys are made here
(``cryptography``) and the tokens minted with PyJWT, or by hand where PyJWT
refuses to make them (``alg: none``, HS256 keyed with a PEM).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from cardhall.clients.client import Client, ServerError
from cardhall.server.auth import FAILURE_COST, HELLOS_PER_PLAYER, LEEWAY, MAX_TOKEN, KeyFileError, load_keys, public_id
from cardhall.server.config import Settings
from cardhall.server.store.memory import MemoryStore
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, LiveServer, RedisServer, free_port, running_server

ISS = "https://accounts.example"
AUD = "cardhall-test"
FAST = {"pause": 0, "bot_think": 0}


@dataclass(frozen=True)
class Keys:
    """The signing keys of the tests and the key files a server is given."""

    secret: bytes
    rsa: rsa.RSAPrivateKey
    ec: ec.EllipticCurvePrivateKey
    other_rsa: rsa.RSAPrivateKey  # a forger's
    files: dict[str, Path]

    def rsa_pem(self) -> bytes:
        return self.files["rs256"].read_bytes()


def _public_pem(key: Any) -> bytes:
    return bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo))


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("jwt-keys")
    secret = b"0123456789abcdef0123456789abcdef-test-secret"
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    files = {"hs256": folder / "hs256.key", "rs256": folder / "rs256.pem", "es256": folder / "es256.pem",
             "jwks": folder / "keys.jwks"}
    files["hs256"].write_bytes(secret + b"\n")  # the line break an editor adds is not part of the secret
    files["rs256"].write_bytes(_public_pem(rsa_key))
    files["es256"].write_bytes(_public_pem(ec_key))
    jwks = {"keys": [{**RSAAlgorithm.to_jwk(rsa_key.public_key(), as_dict=True), "kid": "r1", "use": "sig"},
                     {**ECAlgorithm.to_jwk(ec_key.public_key(), as_dict=True), "kid": "e1", "alg": "ES256"}]}
    files["jwks"].write_text(json.dumps(jwks))
    return Keys(secret, rsa_key, ec_key, other, files)


def mint(key: Any, alg: str, headers: dict[str, Any] | None = None, **claims: Any) -> str:
    """A token signed with ``key``: ann's claims, 10 minutes long, with
    ``claims`` over them (a claim given as None is left out)."""
    now = int(time.time())
    body = {"iss": ISS, "aud": AUD, "sub": "ann@example.com", "name": "Ann", "iat": now, "exp": now + 600, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg, headers=headers)


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def hand_made(header: dict[str, Any], claims: dict[str, Any], sign: Any = None) -> str:
    """A compact JWT made without PyJWT: ``sign(signing input) -> bytes`` (None: no signature)."""
    signing_input = f"{_b64(header)}.{_b64(claims)}"
    signature = b"" if sign is None else sign(signing_input.encode())
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def _claims(**over: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISS, "aud": AUD, "sub": "ann@example.com", "name": "Ann", "iat": now, "exp": now + 600, **over}


def settings_for(keys: Keys, kind: str, **over: Any) -> Settings:
    return replace(TEST_SETTINGS, jwt_key=str(keys.files[kind]), jwt_issuer=ISS, jwt_audience=AUD, **over)


async def hello(srv: LiveServer, auth: str | None = None, name: str = "guest", **extra: Any) -> tuple[Client, dict]:
    """A new connection's ``hello`` with ``auth``: the client and its ``welcome``
    (ServerError when refused; the connection is closed then)."""
    client = await Client(srv.url, record=True).connect()
    msg: dict[str, Any] = {"type": "hello", "name": name, **extra}
    if auth is not None:
        msg["auth"] = auth
    try:
        return client, await client.request(msg)
    except ServerError:
        await client.close()
        raise


async def refusal(client: Client, auth: Any) -> dict[str, Any]:
    """The error frame answering ``hello`` with ``auth`` on ``client``."""
    with pytest.raises(ServerError) as caught:
        await client.request({"type": "hello", "name": "guest", "auth": auth})
    return caught.value.frame


# -- accepted: each kind of key ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["hs256", "rs256", "es256"])
async def test_a_token_of_each_algorithm_is_its_player(keys: Keys, kind: str) -> None:
    key, alg = {"hs256": (keys.secret, "HS256"), "rs256": (keys.rsa, "RS256"), "es256": (keys.ec, "ES256")}[kind]
    async with running_server(settings_for(keys, kind)) as srv:
        ann, welcome = await hello(srv, mint(key, alg))
        assert welcome["player"] == public_id(ISS, "ann@example.com") and welcome["player"].startswith("a_")
        assert welcome["name"] == "Ann"  # the name claim, not the hello's "guest"
        assert "ann" not in welcome["player"]  # the public id shows nothing of sub
        # without a name claim the hello's name; an invalid name claim is ignored the same way
        _, bob = await hello(srv, mint(key, alg, sub="bob", name=None), name="Bob")
        _, eve = await hello(srv, mint(key, alg, sub="eve", name="bot 3"), name="Eve")
        assert (bob["name"], eve["name"]) == ("Bob", "Eve")
        assert bob["player"] == public_id(ISS, "bob") != welcome["player"]
        table = await ann.create_table("loco_poker", seats=3)  # an identified player plays like any other
        snap = await ann.join(table, role="player")
        assert snap["you"] == 1 and snap["info"]["occupants"][0]["player"] == welcome["player"]


async def test_a_jwks_chooses_the_key_by_kid(keys: Keys) -> None:
    async with running_server(settings_for(keys, "jwks")) as srv:
        _, by_rsa = await hello(srv, mint(keys.rsa, "RS256", headers={"kid": "r1"}))
        _, by_ec = await hello(srv, mint(keys.ec, "ES256", headers={"kid": "e1"}))
        assert by_rsa["player"] == by_ec["player"] == public_id(ISS, "ann@example.com")
        client = await Client(srv.url, record=True).connect()
        wrong_key = await refusal(client, mint(keys.rsa, "RS256", headers={"kid": "e1"}))  # e1 is an ES256 key
        assert (wrong_key["code"], wrong_key["reason"]) == ("bad_auth", "algorithm")
        unknown = await refusal(client, mint(keys.rsa, "RS256", headers={"kid": "r9"}))
        assert (unknown["reason"], "r9" in unknown["message"]) == ("unknown_key", True)
        forged = await refusal(client, mint(keys.other_rsa, "RS256", headers={"kid": "r1"}))
        assert forged["reason"] == "bad_signature"
        await client.close()


# -- refused ---------------------------------------------------------------------------------------------

async def test_bad_tokens_are_refused_with_the_reason(keys: Keys) -> None:
    now = int(time.time())
    pem = keys.rsa_pem()
    confused = hand_made({"alg": "HS256", "typ": "JWT"}, _claims(),
                         lambda data: hmac.new(pem, data, hashlib.sha256).digest())
    cases = {
        "forged signature": (mint(keys.other_rsa, "RS256"), "bad_signature", "signature"),
        "expired": (mint(keys.rsa, "RS256", exp=now - 120), "expired", "expired"),
        "not yet valid (nbf)": (mint(keys.rsa, "RS256", nbf=now + 300), "not_yet_valid", "not valid yet"),
        "issued in the future (iat)": (mint(keys.rsa, "RS256", iat=now + 300), "not_yet_valid", "not valid yet"),
        "wrong audience": (mint(keys.rsa, "RS256", aud="another-service"), "wrong_audience", AUD),
        "no audience": (mint(keys.rsa, "RS256", aud=None), "wrong_audience", "aud"),
        "wrong issuer": (mint(keys.rsa, "RS256", iss="https://evil.example"), "wrong_issuer", "iss"),
        "alg none": (hand_made({"alg": "none", "typ": "JWT"}, _claims()), "algorithm", "'none'"),
        "HS256 keyed with the public PEM": (confused, "algorithm", "'HS256'"),
        "RS384": (mint(keys.rsa, "RS384"), "algorithm", "RS256"),
        "no sub": (mint(keys.rsa, "RS256", sub=None), "bad_claim", "sub"),
        "empty sub": (mint(keys.rsa, "RS256", sub=""), "bad_claim", "sub"),
        "sub too long": (mint(keys.rsa, "RS256", sub="x" * 300), "bad_claim", "sub"),
        "no exp": (mint(keys.rsa, "RS256", exp=None), "bad_claim", "exp"),
        "garbage": ("garbage", "malformed", "JWT"),
        "three garbage parts": ("a.b.c", "malformed", "JWT"),
        "too long": ("e" * (MAX_TOKEN + 1), "malformed", "longer than"),
    }
    # each refusal costs 10 frames of the rate limit: lifted here, tested below
    async with running_server(settings_for(keys, "rs256", rate=1000.0, burst=1000.0)) as srv:
        client = await Client(srv.url, record=True).connect()
        for what, (token, reason, words) in cases.items():
            error = await refusal(client, token)
            assert (error["code"], error.get("reason")) == ("bad_auth", reason), (what, error)
            assert error["message"].startswith("the auth token is refused: ") and words in error["message"], (what, error)
        not_text = await refusal(client, 12345)
        assert not_text["code"] == "bad_request"
        with pytest.raises(ServerError) as caught:  # a refused hello left the connection without a player
            await client.create_table("loco_poker")
        assert caught.value.code == "hello_required"
        # within the 30 s leeway an expired or early token is still good: clocks differ
        _, late = await hello(srv, mint(keys.rsa, "RS256", exp=now - 5, nbf=now + 5))
        assert late["player"] == public_id(ISS, "ann@example.com")
        with pytest.raises(ServerError) as both:
            await hello(srv, mint(keys.rsa, "RS256"), token=late["token"])
        assert both.value.code == "bad_request"
        await client.close()


async def test_a_server_without_a_key_takes_no_tokens(live: LiveServer, keys: Keys) -> None:
    client = await Client(live.url, record=True).connect()
    for token in (mint(keys.secret, "HS256"), "not-a-jwt"):
        error = await refusal(client, token)
        assert (error["code"], error["reason"]) == ("bad_auth", "not_accepted")
        assert "takes no auth tokens" in error["message"]
    welcome = await client.hello("guest")  # guests as ever
    assert welcome["player"].startswith("p_")
    await client.close()


async def test_a_refused_token_costs_ten_frames_of_the_rate_limit(keys: Keys) -> None:
    """With a burst of 20 frames (and next to no refill), two refused tokens
    use it up: the next frame is ``rate_limited``; another connection's
    limit is untouched."""
    assert FAILURE_COST == 10
    async with running_server(settings_for(keys, "hs256", rate=0.01, burst=20.0)) as srv:
        client = await Client(srv.url, record=True).connect()
        for _ in range(2):
            assert (await refusal(client, "garbage"))["code"] == "bad_auth"
        with pytest.raises(ServerError) as caught:
            await client.ping()
        assert caught.value.code == "rate_limited"
        other = await Client(srv.url, record=True).connect()  # another connection's limit is its own
        for _ in range(19):
            await other.ping()
        await client.close()
        await other.close()


async def test_a_player_says_hello_with_a_token_a_bounded_number_of_times(keys: Keys) -> None:
    async with running_server(settings_for(keys, "hs256")) as srv:
        client = await Client(srv.url, record=True).connect()
        token = mint(keys.secret, "HS256")
        for _ in range(HELLOS_PER_PLAYER):
            await client.request({"type": "hello", "auth": token})
        with pytest.raises(ServerError) as caught:
            await client.request({"type": "hello", "auth": token})
        assert caught.value.code == "rate_limited" and "resume with your token" in caught.value.message
        welcome = await client.request({"type": "hello", "auth": mint(keys.secret, "HS256", sub="bob")})
        assert welcome["player"] == public_id(ISS, "bob")  # another player's count is its own
        await client.close()


# -- policy: --require-auth --------------------------------------------------------------------------------

async def test_require_auth_refuses_guests_and_resumes_identified_players(keys: Keys) -> None:
    store = MemoryStore(TEST_SETTINGS.event_buffer, keep_states=True)  # kept across the two servers
    async with running_server(settings_for(keys, "hs256"), store) as before:
        _, guest = await hello(before, name="old guest")
        _, ann = await hello(before, mint(keys.secret, "HS256"))
    async with running_server(settings_for(keys, "hs256", require_auth=True), store) as srv:
        # a client that knows nothing of auth gets a refusal naming its request, on either codec
        for codec in ("json", "msgpack"):
            client = await Client(srv.url, codec=codec, record=True).connect()
            await client.send({"type": "hello", "name": "newcomer", "id": "h1"})
            reply = await client.next_frame()
            assert (reply["type"], reply["code"], reply["re"]) == ("error", "auth_required", "h1")
            await client.close()
        with pytest.raises(ServerError) as caught:  # a guest kept from before the policy
            await hello(srv, token=guest["token"])
        assert caught.value.code == "auth_required"
        # the resume token of an identified player still works, and outlives nothing it needs
        resumed_client, resumed = await hello(srv, token=ann["token"])
        assert (resumed["player"], resumed["name"]) == (ann["player"], "Ann")
        _, again = await hello(srv, mint(keys.secret, "HS256"))
        assert again["player"] == ann["player"] and again["token"] != ann["token"]
        _, still = await hello(srv, token=ann["token"])  # an earlier token stays good: another device's
        assert still["player"] == ann["player"]
        await resumed_client.close()
        # HTTP: creating a table needs an identified player's resume token too (or the operator's key)
        body = {"game": "no_limit_holdem", "seats": 2, "bots": 1}
        async with httpx.AsyncClient(base_url=srv.http) as http:
            for headers in ({}, {"Authorization": f"Bearer {guest['token']}"}):
                refused_http = await http.post("/api/tables", json=body, headers=headers)
                assert (refused_http.status_code, refused_http.json()["code"]) == (401, "auth_required")
            made = await http.post("/api/tables", json=body, headers={"Authorization": f"Bearer {ann['token']}"})
            assert made.status_code == 201 and made.json()["info"]["owner"] == ann["player"]
        assert len(srv.hall.tables) == 1  # the refused requests created nothing


async def test_a_resume_token_outlives_the_jwt(keys: Keys) -> None:
    """A token a few seconds short of its end (past ``exp``, within the leeway)
    gives a resume token; once the JWT is refused as expired, the resume
    token still resumes the player, on a ``--require-auth`` server too.
    (The seconds left are what a busy machine may take to start the server.)"""
    exp = int(time.time()) - int(LEEWAY) + 5
    token = mint(keys.secret, "HS256", exp=exp)
    async with running_server(settings_for(keys, "hs256", require_auth=True)) as srv:
        _, first = await hello(srv, token)
        await until(lambda: time.time() > exp + LEEWAY + 1, 30, "the JWT past its exp and the leeway")
        client = await Client(srv.url, record=True).connect()
        assert (await refusal(client, token))["reason"] == "expired"
        resumed = await client.hello("ignored", token=first["token"])
        assert (resumed["player"], resumed["name"]) == (first["player"], "Ann")
        await client.close()


def test_require_auth_needs_a_key() -> None:
    from cardhall.server.auth import Gate

    with pytest.raises(ValueError, match="needs a key"):
        Gate.from_settings(replace(TEST_SETTINGS, require_auth=True))


# -- one account, two connections ------------------------------------------------------------------------

async def test_two_connections_of_one_sub_are_one_player(keys: Keys) -> None:
    async with running_server(settings_for(keys, "es256")) as srv:
        phone, at_phone = await hello(srv, mint(keys.ec, "ES256", name="Ann"))
        table = await phone.create_table("loco_poker", seats=2, bots=1, options=FAST)
        seated = await phone.join(table, role="player")
        assert seated["you"] == 1
        laptop = await Client(srv.url, record=True).connect()  # the Python SDK's hello(auth=...)
        at_laptop = await laptop.hello("laptop", auth=mint(keys.ec, "ES256", name="Ann on her laptop"))
        assert (laptop.player, laptop.token) == (at_laptop["player"], at_laptop["token"])
        assert at_laptop["player"] == at_phone["player"]
        assert at_laptop["name"] == "Ann"  # the player in use keeps its name
        snap = await laptop.join(table, role="player")
        assert snap["you"] == 1  # its seat, not a second one
        people = [o for o in snap["info"]["occupants"] if "player" in o]
        assert [o["player"] for o in people] == [at_phone["player"]]
        await phone.close()
        await laptop.close()


# -- the name: a rename outlasts the claim -----------------------------------------------------------------

async def test_a_renamed_player_keeps_its_name_at_its_next_hello(keys: Keys) -> None:
    store = MemoryStore(TEST_SETTINGS.event_buffer, keep_states=True)
    async with running_server(settings_for(keys, "hs256"), store) as srv:
        client, welcome = await hello(srv, mint(keys.secret, "HS256"))
        assert welcome["name"] == "Ann"
        await client.rename("Annie")
        _, again = await hello(srv, mint(keys.secret, "HS256"))
        assert again["name"] == "Annie"
    async with running_server(settings_for(keys, "hs256"), store) as fresh:  # a node that never held her
        _, later = await hello(fresh, mint(keys.secret, "HS256"))
        assert (later["player"], later["name"]) == (welcome["player"], "Annie")
        _, bob = await hello(fresh, mint(keys.secret, "HS256", sub="bob", name="Bob"))
        assert bob["name"] == "Bob"


# -- key files -------------------------------------------------------------------------------------------

def test_unusable_key_files_are_refused_at_start(tmp_path: Path, keys: Keys) -> None:
    rsa_1024 = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    p384 = ec.generate_private_key(ec.SECP384R1())
    private_pem = keys.rsa.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
    ssh = keys.rsa.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    rsa_jwk = RSAAlgorithm.to_jwk(keys.rsa.public_key(), as_dict=True)
    files = {
        "short.key": (b"too short a secret\n", "at least 32 bytes"),
        "private.pem": (private_pem, "a private key"),
        "ssh.pub": (ssh, "looks like a public or private key"),
        "rsa1024.pem": (_public_pem(rsa_1024), "at least 2048"),
        "p384.pem": (_public_pem(p384), "P-256"),
        "private.jwks": (json.dumps({"keys": [RSAAlgorithm.to_jwk(keys.rsa, as_dict=True)]}).encode(), "private"),
        "twice.jwks": (json.dumps({"keys": [{**rsa_jwk, "kid": "a"}, {**rsa_jwk, "kid": "a"}]}).encode(), "two keys"),
        "nokid.jwks": (json.dumps({"keys": [rsa_jwk, rsa_jwk]}).encode(), "kid on each"),
        "ps256.jwks": (json.dumps({"keys": [{**rsa_jwk, "alg": "PS256"}]}).encode(), "RS256 only"),
        "oct.jwks": (json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}).encode(), "kty 'oct'"),
        "broken.pem": (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "not a readable PEM"),
    }
    for name, (data, words) in files.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(KeyFileError) as caught:
            load_keys(str(tmp_path / name))
        assert words in str(caught.value) and name in str(caught.value), (name, str(caught.value))
    with pytest.raises(KeyFileError, match="cannot read it"):
        load_keys(str(tmp_path / "missing.key"))
    (one,) = load_keys(str(keys.files["hs256"]))
    assert (one.alg, one.key) == ("HS256", keys.secret)  # the trailing line break is not part of it


def test_cardhall_serve_refuses_a_bad_key_file_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from cardhall.clients.cli import main

    monkeypatch.delenv("CARDHALL_REDIS_URL", raising=False)
    short = tmp_path / "short.key"
    short.write_bytes(b"secret")
    assert main(["serve", "--jwt-key", str(short)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cardhall serve: error: --jwt-key {short}: an HS256 secret must be at least 32 bytes"), err
    assert main(["serve", "--require-auth"]) == 2
    assert "need --jwt-key" in capsys.readouterr().err


# -- a cluster: two nodes on one Redis ---------------------------------------------------------------------

@pytest.mark.redis
async def test_every_node_of_a_cluster_takes_the_token_and_finds_the_player(keys: Keys,
                                                                             redis_server: RedisServer) -> None:
    """Node a holds the table (``placement: local``); the same JWT on node b
    is the same player, its rename made on a included, and its seat there."""
    base = settings_for(keys, "rs256", redis_url=redis_server.url, redis_prefix="auth", placement="local")
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        phone, at_a = await hello(a, mint(keys.rsa, "RS256"))
        await phone.rename("Annie")
        table = await phone.create_table("loco_poker", seats=2, bots=1, options=FAST)
        assert (await phone.join(table, role="player"))["you"] == 1
        laptop, at_b = await hello(b, mint(keys.rsa, "RS256"), name="laptop")
        assert (at_b["player"], at_b["name"]) == (at_a["player"], "Annie")
        assert table not in b.hall.tables  # served by node a, reached through the cluster
        snap = await laptop.join(table, role="player")
        assert snap["you"] == 1
        tablet, resumed = await hello(b, token=at_a["token"])  # node a's resume token, on node b
        assert resumed["player"] == at_a["player"]
        for client in (phone, laptop, tablet):
            await client.close()


async def test_cardhall_serve_takes_the_options(keys: Keys, tmp_path: Path) -> None:
    """The options as an operator gives them, to a real ``cardhall serve``
    process (the key file named relative to its working directory)."""
    (tmp_path / "jwt.key").write_bytes(keys.files["hs256"].read_bytes())
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning", "--bot-workers", "0", "--jwt-key", "jwt.key",
                             "--jwt-issuer", ISS, "--jwt-audience", AUD, "--require-auth"], cwd=tmp_path)
    try:
        connected: list[Client] = []

        async def connects() -> bool:
            assert proc.poll() is None, f"the server exited with {proc.returncode}"
            try:
                connected.append(await Client(f"ws://127.0.0.1:{port}/ws", record=True).connect())
            except OSError:
                return False
            return True

        await until(connects, 60, "the server accepting a websocket")
        client = connected[0]
        with pytest.raises(ServerError) as caught:
            await client.hello("guest")
        assert caught.value.code == "auth_required"
        welcome = await client.request({"type": "hello", "auth": mint(keys.secret, "HS256")})
        assert (welcome["player"], welcome["name"]) == (public_id(ISS, "ann@example.com"), "Ann")
        await client.close()
    finally:
        proc.terminate()
        proc.wait(30)
