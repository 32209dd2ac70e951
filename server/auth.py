"""Operator-issued identity: the JWTs a ``hello`` carries in ``auth`` (SPEC "Identity").

An operator who runs cardhall behind its own accounts gives ``cardhall serve``
one key file (``--jwt-key FILE``, read once at start by :func:`load_keys`):

* a **secret** for HS256: the file's bytes, white space around them removed
  (the line break an editor or ``echo`` adds), at least :data:`MIN_SECRET`
  bytes; a file that holds a public key in another form (OpenSSH, DER) is
  refused, so a public key can never be used as an HMAC secret;
* a **PEM public key** (or an X.509 certificate holding one): RS256 for an
  RSA key of at least 2048 bits, ES256 for an EC key on P-256;
* a **JWKS** (``{"keys": [...]}``, or one JWK): each RSA or EC P-256 public
  key with its ``kid``; a token's ``kid`` chooses among them.

A private key anywhere is refused: the server only verifies. Each key allows
exactly one algorithm, so ``alg: none`` and HS256 signed with a public key's
bytes (the classic key-confusion forgery) are refused before any signature
is checked. PyJWT (``jwt``) does the verifying.

A token is accepted (:meth:`Verifier.verify`) when its signature is good,
``exp`` is there and not past, ``nbf`` and ``iat`` are not in the future
(each with :data:`LEEWAY` seconds for clocks that differ), ``iss`` and
``aud`` match ``--jwt-issuer`` / ``--jwt-audience`` when they are set (a token
naming an audience is refused by a server that expects none, RFC 7519 4.1.3),
and ``sub`` is a string of 1 to :data:`MAX_SUB` characters. The player's public
id is :func:`public_id` of ``iss`` and ``sub``: a hash, since ``sub`` may be an
e-mail address and public ids are shown to everyone.

:class:`Gate` is what the websocket session asks: the verifier (or none), the
``--require-auth`` policy, and two bounds: a refused token costs its
connection :data:`FAILURE_COST` frames of its rate limit, and a player may
say hello with a token :data:`HELLOS_PER_PLAYER` times a minute (each stores
a resume token).
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import HMACAlgorithm

from cardhall.protocol.errors import ProtocolError
from cardhall.server.config import Settings
from cardhall.server.names import checked_name
from cardhall.server.ratelimit import AddressBudget, TokenBucket

#: seconds of clock difference allowed on ``exp``, ``nbf`` and ``iat``
LEEWAY = 30.0
#: longest ``hello.auth`` read, characters (a JWT is ASCII); well within the 16 KiB frame limit
MAX_TOKEN = 8192
#: longest ``sub`` claim, characters
MAX_SUB = 256
#: shortest HS256 secret, bytes (RFC 7518 3.2: at least the hash's size)
MIN_SECRET = 32
#: shortest RSA key, bits
MIN_RSA_BITS = 2048
#: frames of the connection's rate limit a refused token costs (itself included): at the default
#: 50 frames a second, a connection is refused at most 5 tokens a second, however it sends them
FAILURE_COST = 10
#: hellos with a valid token one player may say per :data:`HELLO_WINDOW` seconds (each node on its own):
#: each stores a new resume token
HELLOS_PER_PLAYER = 20
HELLO_WINDOW = 60.0
#: the public ids of identified players: ``a_`` and 16 hex digits (a guest's are ``p_`` ones)
ID_PREFIX = "a_"


class KeyFileError(ValueError):
    """The key file cannot be used; the message says why, naming the file."""


@dataclass(frozen=True, slots=True)
class VerifyKey:
    """One key a token may be verified with: ``alg``, the one algorithm it
    allows (``HS256``, ``RS256`` or ``ES256``, by its kind); ``key``, the
    secret's bytes or a cryptography public key; ``kid``, its JWKS key id
    (None for a secret or a PEM key)."""

    alg: str
    key: Any
    kid: str | None = None


@dataclass(frozen=True, slots=True)
class Identity:
    """A verified token's player: ``player``, its public id
    (:func:`public_id`); ``name``, its ``name`` claim when that is a valid
    name (``server/names.py``, normalised), else None."""

    player: str
    name: str | None


def public_id(iss: str, sub: str) -> str:
    """The public id of the player ``sub`` of issuer ``iss`` (``""`` when the
    token has none): :data:`ID_PREFIX` and the first 16 hex digits of SHA-256
    over a label and both strings, each prefixed with its UTF-8 length (so
    no two pairs encode alike). It reveals nothing of ``sub``.

    >>> public_id("https://accounts.example", "ann@example.com")
    'a_5a5b5a1f413180a4'
    >>> public_id("a", "bc") != public_id("ab", "c")
    True
    """
    digest = hashlib.sha256(b"cardhall identity\x00")
    for part in (iss, sub):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(struct.pack(">I", len(data)) + data)
    return ID_PREFIX + digest.hexdigest()[:16]


def identified(player: str) -> bool:
    """True when ``player`` is the public id of an identified player (not a guest)."""
    return player.startswith(ID_PREFIX)


def load_keys(path: str) -> list[VerifyKey]:
    """The keys of the key file at ``path`` (see the module docstring for
    the three kinds). Raises :class:`KeyFileError` with the reason when the
    file cannot be read or holds nothing usable."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise KeyFileError(f"--jwt-key {path}: cannot read it ({exc.strerror})") from None
    text = data.strip()
    try:
        if text.startswith(b"-----BEGIN"):
            return [_pem_key(text)]
        if text.startswith(b"{"):
            return _jwks(text)
        return [_secret(text)]
    except KeyFileError as exc:
        raise KeyFileError(f"--jwt-key {path}: {exc}") from None


def _secret(data: bytes) -> VerifyKey:
    if len(data) < MIN_SECRET:
        raise KeyFileError(f"an HS256 secret must be at least {MIN_SECRET} bytes (this one has {len(data)}); "
                           "e.g. python3 -c 'import secrets; print(secrets.token_hex(32))' > FILE")
    try:
        HMACAlgorithm(HMACAlgorithm.SHA256).prepare_key(data)
    except jwt.InvalidKeyError:
        raise KeyFileError("this looks like a public or private key, not a secret: give a public key as PEM "
                           "(openssl pkey -pubout) or a JWKS") from None
    return VerifyKey("HS256", data)


def _pem_key(data: bytes) -> VerifyKey:
    if b"PRIVATE KEY-----" in data.split(b"\n", 1)[0]:
        raise KeyFileError("a private key: give the server the public key only (openssl pkey -pubout)")
    try:
        if data.startswith(b"-----BEGIN CERTIFICATE-----"):
            key: Any = x509.load_pem_x509_certificate(data).public_key()
        else:
            key = serialization.load_pem_public_key(data)
    except ValueError as exc:
        raise KeyFileError(f"not a readable PEM public key or certificate ({exc})") from None
    return VerifyKey(_algorithm(key), key)


def _algorithm(key: Any) -> str:
    """The one algorithm a public key is used with; KeyFileError for any other key."""
    if isinstance(key, rsa.RSAPublicKey):
        if key.key_size < MIN_RSA_BITS:
            raise KeyFileError(f"an RSA key of {key.key_size} bits: at least {MIN_RSA_BITS}")
        return "RS256"
    if isinstance(key, ec.EllipticCurvePublicKey):
        if not isinstance(key.curve, ec.SECP256R1):
            raise KeyFileError(f"an EC key on {key.curve.name}: ES256 needs P-256 (secp256r1)")
        return "ES256"
    raise KeyFileError(f"a {type(key).__name__}: the server takes RSA (RS256) or EC P-256 (ES256) keys")


def _jwks(data: bytes) -> list[VerifyKey]:
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise KeyFileError(f"not valid JSON ({exc})") from None
    entries = doc.get("keys") if isinstance(doc, dict) and "keys" in doc else [doc]
    if not isinstance(entries, list) or not entries:
        raise KeyFileError('a JWKS needs "keys": a non-empty list of keys')
    keys: list[VerifyKey] = []
    for n, entry in enumerate(entries, 1):
        where = f"key {n}" + (f" (kid {entry.get('kid')!r})" if isinstance(entry, dict) and "kid" in entry else "")
        if not isinstance(entry, dict):
            raise KeyFileError(f"{where}: not a JSON object")
        if entry.get("kty") not in ("RSA", "EC"):
            raise KeyFileError(f"{where}: kty {entry.get('kty')!r}: a JWKS here holds RSA or EC public keys")
        if "d" in entry:
            raise KeyFileError(f"{where}: a private key: give the server the public keys only")
        if entry.get("use", "sig") != "sig":
            raise KeyFileError(f"{where}: use {entry.get('use')!r}: only signing keys (\"sig\")")
        kid = entry.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise KeyFileError(f"{where}: kid must be a string")
        try:
            jwk = jwt.PyJWK(entry)
        except jwt.PyJWTError as exc:
            raise KeyFileError(f"{where}: not a usable key ({exc})") from None
        alg = _algorithm(jwk.key)
        if entry.get("alg", alg) != alg:
            raise KeyFileError(f"{where}: alg {entry.get('alg')!r}: this key is used with {alg} only")
        if kid is not None and any(k.kid == kid for k in keys):
            raise KeyFileError(f"{where}: two keys with kid {kid!r}")
        keys.append(VerifyKey(alg, jwk.key, kid))
    if len(keys) > 1 and any(k.kid is None for k in keys):
        raise KeyFileError("a JWKS of several keys needs a kid on each (a token's kid chooses its key)")
    return keys


def refused(reason: str, why: str) -> ProtocolError:
    """The ``bad_auth`` error for a refused token: ``reason`` is the short
    code (SPEC "Identity"), ``why`` the sentence in ``message``.

    >>> refused("expired", "the token has expired").frame(3)["reason"]
    'expired'
    """
    return ProtocolError("bad_auth", f"the auth token is refused: {why}", reason=reason)


#: PyJWT's other refusals -> (reason, why)
_REASONS: tuple[tuple[type[Exception], str, str], ...] = (
    (jwt.ExpiredSignatureError, "expired", "it has expired (exp)"),
    (jwt.ImmatureSignatureError, "not_yet_valid", "it is not valid yet (nbf or iat in the future)"),
    (jwt.InvalidAlgorithmError, "algorithm", "its algorithm is not allowed"),
    (jwt.InvalidKeyError, "algorithm", "its algorithm does not fit the server's key"),
)


class Verifier:
    """Verifies tokens against ``keys`` (:func:`load_keys`); ``issuer`` and
    ``audience``: the ``iss`` and ``aud`` required (None: ``iss`` not
    checked; an ``aud`` in a token refused)."""

    def __init__(self, keys: list[VerifyKey], issuer: str | None = None, audience: str | None = None) -> None:
        if not keys:
            raise ValueError("a verifier needs at least one key")
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.algorithms = sorted({k.alg for k in keys})

    def verify(self, token: str) -> Identity:
        """The identity of ``token`` (a str); ProtocolError ``bad_auth``
        (:func:`refused`, with the reason) when it is refused."""
        if len(token) > MAX_TOKEN:
            raise refused("malformed", f"longer than {MAX_TOKEN} characters")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise refused("malformed", f"not a well-formed JWT ({exc})") from None
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise refused("algorithm", f"algorithm {alg!r} is not allowed: this server takes "
                          f"{', '.join(self.algorithms)}")
        keyed = [k for k in self.keys if k.kid is not None]
        if isinstance(kid, str) and keyed:
            candidates = [k for k in keyed if k.kid == kid]
            if not candidates:
                raise refused("unknown_key", f"no key of this server has kid {kid[:64]!r}")
        else:
            candidates = self.keys
        candidates = [k for k in candidates if k.alg == alg]
        if not candidates:
            raise refused("algorithm", f"algorithm {alg} does not fit the key named by kid")
        for key in candidates:
            try:
                claims = jwt.decode(token, key.key, algorithms=[key.alg], issuer=self.issuer,
                                    audience=self.audience, leeway=LEEWAY, options={"require": ["exp", "sub"]})
            except jwt.InvalidSignatureError:
                continue
            except jwt.MissingRequiredClaimError as exc:
                reason = {"iss": "wrong_issuer", "aud": "wrong_audience"}.get(exc.claim, "bad_claim")
                raise refused(reason, f"it has no {exc.claim} claim") from None
            except jwt.InvalidAudienceError:
                expected = f"this server is {self.audience!r}" if self.audience else "this server expects none"
                raise refused("wrong_audience", f"wrong audience (aud): {expected}") from None
            except jwt.InvalidIssuerError:
                raise refused("wrong_issuer", f"wrong issuer (iss): this server takes {self.issuer!r}") from None
            except jwt.DecodeError as exc:  # a claim of the wrong type (checked after the signature), or bad base64
                reason = "bad_claim" if "claim" in str(exc) else "malformed"
                raise refused(reason, f"{exc}" if reason == "bad_claim" else f"not a well-formed JWT ({exc})") from None
            except jwt.PyJWTError as exc:
                for kind, reason, why in _REASONS:
                    if isinstance(exc, kind):
                        raise refused(reason, why) from None
                raise refused("bad_claim", str(exc)) from None
            return self._identity(claims)
        raise refused("bad_signature", "its signature does not verify")

    @staticmethod
    def _identity(claims: dict[str, Any]) -> Identity:
        sub, iss = claims["sub"], claims.get("iss", "")
        if not isinstance(sub, str) or not 1 <= len(sub) <= MAX_SUB:
            raise refused("bad_claim", f"sub must be a string of 1 to {MAX_SUB} characters")
        if not isinstance(iss, str):
            raise refused("bad_claim", "iss must be a string")
        name = claims.get("name")
        try:
            name = checked_name(name) if name is not None else None
        except ProtocolError:
            name = None  # a claimed name that is not a valid name here: the hello's name instead
        return Identity(public_id(iss, sub), name)


class Gate:
    """Who may say ``hello`` (SPEC "Identity"): ``verifier`` (None: the
    server takes no tokens), ``required`` (``--require-auth``: guests are
    refused). Bounds (SPEC "Limits"): a refused token costs
    :data:`FAILURE_COST` frames of its connection's rate limit; a player
    says hello with a valid token at most :data:`HELLOS_PER_PLAYER` times per
    :data:`HELLO_WINDOW` s (counted on each node on its own)."""

    def __init__(self, verifier: Verifier | None, required: bool = False) -> None:
        if required and verifier is None:
            raise ValueError("require-auth needs a key to verify tokens with")
        self.verifier = verifier
        self.required = required
        self._hellos = AddressBudget(HELLOS_PER_PLAYER, HELLO_WINDOW)

    @classmethod
    def from_settings(cls, settings: Settings) -> Gate:
        """The gate of ``settings`` (``jwt_key`` read now); KeyFileError when
        the key file is unusable, ValueError for ``require_auth``,
        ``jwt_issuer`` or ``jwt_audience`` without ``jwt_key``."""
        if settings.jwt_key is None:
            if settings.jwt_issuer is not None or settings.jwt_audience is not None:
                raise ValueError("--jwt-issuer and --jwt-audience need --jwt-key")
            return cls(None, settings.require_auth)
        verifier = Verifier(load_keys(settings.jwt_key), settings.jwt_issuer, settings.jwt_audience)
        return cls(verifier, settings.require_auth)

    def identify(self, token: Any, bucket: TokenBucket, now: float | None = None) -> Identity:
        """The identity of ``hello.auth`` ``token`` sent on a connection
        whose rate limit is ``bucket`` (``now``: monotonic seconds). Raises
        ProtocolError ``bad_request`` (not a string), ``bad_auth`` (refused,
        or no key here; the bucket is charged), ``rate_limited`` (the player
        said hello too often lately)."""
        if not isinstance(token, str):
            raise ProtocolError("bad_request", "auth must be a string: a JWT")
        if self.verifier is None:
            raise refused("not_accepted", "this server takes no auth tokens (it has no --jwt-key)")
        try:
            identity = self.verifier.verify(token)
        except ProtocolError:
            bucket.tokens -= FAILURE_COST - 1  # the frame took one; below zero it waits that much longer
            raise
        if not self._hellos.take(identity.player, time.monotonic() if now is None else now):
            raise ProtocolError("rate_limited", f"at most {HELLOS_PER_PLAYER} hellos with auth per "
                                f"{HELLO_WINDOW:g} s for one player; resume with your token")
        return identity

    def admit_guest(self) -> None:
        """A ``hello`` without ``auth`` or ``token`` (a new guest): ProtocolError
        ``auth_required`` on a ``--require-auth`` server."""
        if self.required:
            raise ProtocolError("auth_required", "this server admits only players its operator identifies: "
                                "say hello with auth (a token from the operator's accounts)")

    def admit_resumed(self, player: str) -> None:
        """A ``hello`` with a resume token of ``player`` (its public id):
        ProtocolError ``auth_required`` for a guest's on a ``--require-auth``
        server (a guest kept in the store from before the policy)."""
        if self.required and not identified(player):
            raise ProtocolError("auth_required", "this server admits only players its operator identifies: "
                                "this token is a guest's; say hello with auth")
