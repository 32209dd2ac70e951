"""Protocol v1 codecs: the two websocket subprotocols and their frames.

``cardhall.v1.msgpack`` carries each message as one binary frame (msgpack);
``cardhall.v1.json`` as one text frame (UTF-8 JSON via orjson). Both carry the
same maps. A ``batch`` frame holds several server frames in one websocket
message; it is built from frames already encoded (no re-encoding), so the
fan-out encodes each event once per view and codec, however many connections
share it.

>>> c = CODECS[MSGPACK]
>>> c.decode(c.encode({"type": "ping", "id": 1}))
{'type': 'ping', 'id': 1}
>>> j = CODECS[JSON]
>>> j.decode(j.batch([j.encode({"a": 1}), j.encode({"b": 2})]))
{'type': 'batch', 'frames': [{'a': 1}, {'b': 2}]}
>>> c.decode(c.batch([c.encode({"a": 1}), c.encode({"b": 2})]))
{'type': 'batch', 'frames': [{'a': 1}, {'b': 2}]}
"""

from __future__ import annotations

from typing import Any

import msgpack
import orjson

from cardhall.protocol.errors import ProtocolError

VERSION = 1
MSGPACK = "cardhall.v1.msgpack"
JSON = "cardhall.v1.json"
SUBPROTOCOLS = (MSGPACK, JSON)

#: Largest client frame the server reads, in bytes (larger ones get ``frame_too_large``).
MAX_FRAME = 16 * 1024

_ORJSON_OPTS = orjson.OPT_NON_STR_KEYS


class Codec:
    """One subprotocol's encoding. ``binary`` says which websocket frame kind it uses."""

    name: str
    binary: bool

    def encode(self, message: dict[str, Any] | list[Any]) -> bytes | str:
        """The websocket payload for ``message``, a frame (a map, or a compact
        events array, 1.8), as bytes for binary or str for text."""
        raise NotImplementedError

    def load(self, payload: bytes | str, limit: int = MAX_FRAME) -> Any:
        """The value in ``payload`` (at most ``limit`` bytes or characters),
        whatever it is: a client reads server frames this way (a compact
        events array, 1.8, is a list); raises ProtocolError
        ``malformed``/``frame_too_large``."""
        raise NotImplementedError

    def decode(self, payload: bytes | str, limit: int = MAX_FRAME) -> dict[str, Any]:
        """The map in ``payload`` (at most ``limit`` bytes or characters): a
        client message, or any server frame but a compact array; raises
        ProtocolError ``malformed`` (not this codec, or not a map) and
        ``frame_too_large``."""
        return _check_map(self.load(payload, limit))

    def batch(self, encoded: list[Any]) -> bytes | str:
        """One ``batch`` frame holding the already encoded frames ``encoded``, in order."""
        raise NotImplementedError


def _check_map(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ProtocolError("malformed", "a frame must be a map")
    return obj


#: the msgpack codec's packer, made once (``msgpack.packb`` makes one per call); it starts empty
#: again after each frame, and after a frame it could not pack
_PACKER = msgpack.Packer(autoreset=True)


class MsgpackCodec(Codec):
    """Binary frames, msgpack (strings as str, binary as bytes)."""

    name = MSGPACK
    binary = True
    _BATCH_HEAD = msgpack.packb("type") + msgpack.packb("batch") + msgpack.packb("frames")

    def encode(self, message: dict[str, Any] | list[Any]) -> bytes:
        return _PACKER.pack(message)

    def load(self, payload: bytes | str, limit: int = MAX_FRAME) -> Any:
        if isinstance(payload, str):
            raise ProtocolError("malformed", f"{MSGPACK} carries binary frames")
        if len(payload) > limit:
            raise ProtocolError("frame_too_large", f"frame of {len(payload)} bytes; limit {limit}")
        try:
            return msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception as exc:  # msgpack raises several unrelated types
            raise ProtocolError("malformed", f"not msgpack: {type(exc).__name__}") from None

    def batch(self, encoded: list[bytes]) -> bytes:
        n = len(encoded)
        head = bytes([0x82]) + self._BATCH_HEAD
        if n < 16:
            arr = bytes([0x90 | n])
        elif n < 65536:
            arr = b"\xdc" + n.to_bytes(2, "big")
        else:
            arr = b"\xdd" + n.to_bytes(4, "big")
        return b"".join([head, arr, *encoded])


class JsonCodec(Codec):
    """Text frames, JSON."""

    name = JSON
    binary = False

    def encode(self, message: dict[str, Any] | list[Any]) -> str:
        return orjson.dumps(message, option=_ORJSON_OPTS).decode()

    def load(self, payload: bytes | str, limit: int = MAX_FRAME) -> Any:
        if len(payload) > limit:
            raise ProtocolError("frame_too_large", f"frame of {len(payload)} bytes; limit {limit}")
        try:
            return orjson.loads(payload)
        except orjson.JSONDecodeError:
            raise ProtocolError("malformed", "not JSON") from None

    def batch(self, encoded: list[str]) -> str:
        return '{"type":"batch","frames":[' + ",".join(encoded) + "]}"


CODECS: dict[str, Codec] = {MSGPACK: MsgpackCodec(), JSON: JsonCodec()}


def choose_subprotocol(offered: list[str]) -> str | None:
    """The subprotocol the server speaks for a client offering ``offered``: the
    first supported one in the client's order; JSON when nothing is offered;
    None (refuse the handshake) when only unknown ones are."""
    for name in offered:
        if name in CODECS:
            return name
    return None if offered else JSON
