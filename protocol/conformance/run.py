"""Run the kit's error cases (``errors.json``) against a server.

    python -m cardhall.protocol.conformance.run --server ws://127.0.0.1:8000/ws [--operator-key KEY]
        [--codec json] [--case NAME]

Each case gets fresh connections (one per client it names), its set-up steps,
then its request; the answer must contain every field of the case's
``expect``. Each client name keeps one player for the whole run: its first
``hello`` makes the player, later ones send its token (so a server's limit
on new players per address is not reached). With the operator key every
table a case created is closed after it (``POST /api/ops/tables/{id}/close``);
without it those tables stay open (bots playing), so run against a server
whose per-player and per-address table limits allow about 90 tables. Prints
one line per case and subprotocol and exits 1 when any failed (2 for a bad
command line). The Python tests run the same cases through :class:`Runner`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.protocol.conformance import load

#: seconds a case waits for each answer
ANSWER_WITHIN = 5.0
#: the subprotocols by the short names the cases use
CODEC_NAMES = {"json": JSON, "msgpack": MSGPACK}


@dataclass
class Outcome:
    """One case on one subprotocol: ``answer`` (the frame that answered, or
    None) and ``problem`` (None when the answer holds every expected field)."""

    case: str
    codec: str
    answer: dict[str, Any] | None
    problem: str | None


class CaseFailed(Exception):
    """A set-up step or the request got no fitting answer."""


def _bind(value: Any, names: dict[str, Any]) -> Any:
    """``value`` with every string that is a name (``"$table"``, ``"$invite"``, ``"$player_b"``) replaced by its value."""
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, dict):
        return {k: _bind(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_bind(v, names) for v in value]
    return value


async def _answer(ws: ClientConnection, codec: str, re: Any) -> dict[str, Any]:
    """The first frame whose ``re`` is ``re`` (null: a frame with ``re`` null,
    the answer to a request without an id or one the server could not read).
    ``batch`` frames are read frame by frame; frames without ``re`` (events,
    snapshots sent on their own) are skipped. Raises CaseFailed after
    :data:`ANSWER_WITHIN` seconds."""
    decoder = CODECS[codec]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ANSWER_WITHIN
    while True:
        left = deadline - loop.time()
        if left <= 0:
            raise CaseFailed(f"no frame with re {re!r} within {ANSWER_WITHIN} s")
        try:
            payload = await asyncio.wait_for(ws.recv(), left)
        except TimeoutError:
            raise CaseFailed(f"no frame with re {re!r} within {ANSWER_WITHIN} s") from None
        frame = decoder.decode(payload, limit=1 << 24)
        for inner in frame["frames"] if frame.get("type") == "batch" else [frame]:
            if "re" in inner and inner["re"] == re and type(inner["re"]) is type(re):
                return dict(inner)


def http_base(url: str) -> str:
    """The HTTP base URL of the server whose websocket URL is ``url``.

    >>> http_base("wss://example.org/ws")
    'https://example.org'
    """
    scheme, rest = url.split("://", 1)
    return ("https" if scheme == "wss" else "http") + "://" + rest.split("/", 1)[0]


class Runner:
    """Runs cases against the server at ``url`` (websocket), keeping one
    player per client name; ``operator_key``: close each case's table after it."""

    def __init__(self, url: str, operator_key: str | None = None) -> None:
        self.url = url
        self.operator_key = operator_key
        self.tokens: dict[tuple[str, str], str] = {}

    async def run_case(self, codec: str, case: dict[str, Any]) -> Outcome:
        """Run ``case`` (one entry of ``errors.json``'s ``cases``) on subprotocol
        ``codec`` (``"json"`` or ``"msgpack"``)."""
        names: dict[str, Any] = {}
        subprotocol = CODEC_NAMES[codec]
        encoder = CODECS[subprotocol]
        sockets: dict[str, ClientConnection] = {}

        async def client(name: str) -> ClientConnection:
            if name not in sockets:
                sockets[name] = await connect(self.url, subprotocols=[subprotocol],  # type: ignore[list-item]
                                              max_size=None, compression=None, open_timeout=ANSWER_WITHIN)
            return sockets[name]

        try:
            for step in case.get("setup", ()):
                who = step["client"]
                ws = await client(who)
                message = _bind(step["send"], names)
                token = self.tokens.get((codec, who))
                if message["type"] == "hello" and "token" not in message and token is not None:
                    message = {**message, "token": token}
                await ws.send(encoder.encode(message))
                reply = await _answer(ws, subprotocol, message["id"])
                if reply.get("type") != step["reply"]:
                    raise CaseFailed(f"set-up step {message} got {reply}")
                if reply["type"] == "welcome":
                    self.tokens[(codec, who)] = reply["token"]
                    names[f"$player_{who}"] = reply["player"]
                if reply["type"] == "table_created":
                    names["$table"] = reply["table"]
                    names["$invite"] = reply.get("invite")
            ws = await client(case["client"])
            if "raw" in case:
                raw = case["raw"]
                await ws.send(bytes.fromhex(raw["binary_hex"]) if "binary_hex" in raw else raw["text"])
            else:
                message = _bind(case["send"], names)
                if "pad" in case:  # a frame over the server's frame limit
                    message = {**message, "pad": "x" * case["pad"]}
                await ws.send(encoder.encode(message))
            answer = await _answer(ws, subprotocol, case["expect"]["re"])
        except CaseFailed as exc:
            return Outcome(case["name"], codec, None, str(exc))
        finally:
            for ws in sockets.values():
                await ws.close()
            if "$table" in names and self.operator_key:
                await self._close(names["$table"])
        wrong = {k: answer.get(k, "<absent>") for k, v in case["expect"].items() if k not in answer or answer[k] != v}
        return Outcome(case["name"], codec, answer, f"expected {case['expect']}, differs in {wrong}" if wrong else None)

    async def _close(self, table: str) -> None:
        async with httpx.AsyncClient(base_url=http_base(self.url), timeout=ANSWER_WITHIN) as http:
            await http.post(f"/api/ops/tables/{table}/close", headers={"X-Operator-Key": self.operator_key or ""})

    async def run_all(self, codecs: Iterable[str], names: Iterable[str] | None = None) -> list[Outcome]:
        """Every case on every subprotocol of ``codecs``, one after the other."""
        return [await self.run_case(codec, case) for codec in codecs for case in cases_for(codec, names)]


def cases_for(codec: str, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The cases of ``errors.json`` that run on ``codec`` (only ``names``, when given)."""
    wanted = set(names) if names else None
    return [c for c in load("errors")["cases"]
            if codec in c.get("codecs", CODEC_NAMES) and (wanted is None or c["name"] in wanted)]


def main(argv: list[str] | None = None) -> int:
    """The command line (module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m cardhall.protocol.conformance.run",
                                     description="run the conformance kit's error cases against a server")
    parser.add_argument("--server", required=True, metavar="URL", help="the server's websocket URL (ws://host:port/ws)")
    parser.add_argument("--codec", choices=sorted(CODEC_NAMES), action="append",
                        help="a subprotocol to run on (default: both)")
    parser.add_argument("--case", action="append", metavar="NAME", help="run only this case (repeatable)")
    parser.add_argument("--operator-key", metavar="KEY", help="the server's operator key: close each case's table after it")
    args = parser.parse_args(argv)
    try:
        runner = Runner(args.server, args.operator_key)
        outcomes = asyncio.run(runner.run_all(args.codec or sorted(CODEC_NAMES), args.case))
    except (OSError, TimeoutError) as exc:
        print(f"cannot reach {args.server}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    for o in outcomes:
        print(f"{'ok  ' if o.problem is None else 'FAIL'} {o.codec:8} {o.case}" + (f": {o.problem}" if o.problem else ""))
    failed = sum(o.problem is not None for o in outcomes)
    print(f"{len(outcomes) - failed} of {len(outcomes)} passed")
    if not args.operator_key and any("too_many_tables" in (o.problem or "") for o in outcomes):
        print("(the server's table limits refused set-up steps: give --operator-key to close each case's table, "
              "or run it against a server started with higher --max-tables-per-player and --max-tables-per-address)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
