"""Record a whole hand of each game from a real server: ``protocol/examples/<game>.json``.

    python -m cardhall.protocol.examples.record [--server ws://HOST:PORT/ws] [--out DIR] [GAME ...]

Without ``--server`` it serves on a free loopback port in this process. For
each game, *ann* (JSON subprotocol) creates a two-seat table with one server
bot, *eve* watches as a spectator, and ann plays her seat with the ``random``
strategy through :class:`cardhall.clients.bots.BotPlayer` (solo play: the table waits
for ann's ``continue`` between streets and hands, G-4). Recording stops at the
end of the first hand (Avalanche: the game, which is the whole match).

The games recorded are the registered games that have an example
(:attr:`cardhall.engine.plugins.GameSpec.example`: the options of a short hand
and the event that ends it); nothing here lists them.

Each file holds ``game``, ``subprotocol``, ``options`` and two transcripts,
``player`` and ``spectator``: every message in order, ``{"send": message}`` or
``{"recv": frame}`` (``batch`` frames unpacked), exactly as the server sent
them. ``tests/protocol/test_examples.py`` keeps them valid against the schemas.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from cardhall.clients.bots import BotPlayer
from cardhall.clients.client import Client
from cardhall.engine import plugins

HERE = Path(__file__).resolve().parent


def example_games() -> dict[str, plugins.Example]:
    """Registered game -> how its example is recorded, for the games that have one."""
    return {name: spec.example for name, spec in plugins.games().items() if spec.example is not None}


@contextlib.asynccontextmanager
async def local_server() -> AsyncIterator[str]:
    """A server on a free loopback port for the block; yields its websocket URL."""
    from cardhall.server.app import serving
    from cardhall.server.config import Settings

    async with serving(Settings(port=0, log_level="warning")) as (_, port):
        yield f"ws://127.0.0.1:{port}/ws"


async def record_hand(url: str, game: str) -> dict[str, Any]:
    """Play the first hand of a new ``game`` table; returns the example document.
    Raises KeyError for a game without an example (:func:`example_games`)."""
    example = example_games()[game]
    options = {"pause": 0, "bot_think": 0, **example.options}
    ann = await Client(url, codec="json", batch=False, record=True).connect()
    eve = await Client(url, codec="json", batch=False, record=True).connect()
    try:
        await ann.hello("ann")
        await eve.hello("eve")
        table = await ann.create_table(game, seats=2, bots=1, options=options)
        await eve.join(table, role="spectator")
        player = BotPlayer(ann, table, "random", seed="ann's seed", bot_seed=b"examples")
        playing = asyncio.get_running_loop().create_task(player.play(timeout=120))
        ending = example.until
        end = await eve.next_event(table, timeout=120, where=lambda f: f["event"]["type"] == ending)
        while ann.seqs.get(table, 0) < end["seq"]:
            await asyncio.sleep(0.01)
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
        return {
            "game": game,
            "description": f"the first hand of a {game} match: ann (seat {player.seat}) against a server bot, "
                           "eve watching; recorded by protocol/examples/record.py",
            "subprotocol": "cardhall.v1.json",
            "options": options,
            "player": _until(ann.transcript, table, end["seq"]),
            "spectator": _until(eve.transcript, table, end["seq"]),
        }
    finally:
        await ann.close()
        await eve.close()


def _until(transcript: list[dict[str, Any]], table: str, seq: int) -> list[dict[str, Any]]:
    """The transcript up to the frame carrying event ``seq`` of ``table``."""
    out = []
    for entry in transcript:
        out.append(entry)
        frame = entry.get("recv")
        if frame and frame.get("type") == "event" and frame.get("table") == table and frame["seq"] == seq:
            break
    return out


def dump(example: dict[str, Any]) -> str:
    """The example as JSON, one message per line (readable diffs)."""
    head = {k: v for k, v in example.items() if k not in ("player", "spectator")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    for i, side in enumerate(("player", "spectator")):
        lines.append(f"  {json.dumps(side)}: [")
        entries = example[side]
        lines += [f"    {json.dumps(e)}" + ("," if j < len(entries) - 1 else "") for j, e in enumerate(entries)]
        lines.append("  ]" + ("," if i == 0 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


async def main_async(args: argparse.Namespace) -> None:
    games = args.games or list(example_games())
    out = Path(args.out)
    if args.server:
        servers: contextlib.AbstractAsyncContextManager[str] = contextlib.nullcontext(args.server)
    else:
        servers = local_server()
    async with servers as url:
        for game in games:
            example = await record_hand(url, game)
            path = out / f"{game}.json"
            path.write_text(dump(example))
            print(f"{path}: {len(example['player'])} player messages, {len(example['spectator'])} spectator messages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="websocket URL of a running server (default: serve one here)")
    parser.add_argument("--out", default=str(HERE), help="folder for the files (default: protocol/examples)")
    parser.add_argument("games", nargs="*", help="games (default: every registered game with an example)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
