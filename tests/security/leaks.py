"""Checking what a connection received against what its viewer may see.

The server keeps every event it published (the tests' ``event_buffer`` is
large), each with its redaction (``Event.view``). A frame a connection got is
correct only if it is exactly the view of one of the viewers that connection
could be at that table: a spectator (None) or a seat its player holds. So a
connection never gets another seat's private fields, ``legal`` actions of a
turn that is not its own, or an event the server did not publish; a
``snapshot`` holds no card beyond the public cards and its own seats' private
cards published up to its ``seq``; no frame carries the server seed before the
match that used it ended (G-2), nor a field that names the deck order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cardhall.protocol.codec import Codec
from tests.server.play import cards_in

Frame = dict[str, Any]

#: keys that would carry hidden state (the deck order, generators)
FORBIDDEN_KEYS = {"deck_order", "shuffled", "stub", "server_seed_hex", "rng", "key", "burned", "muck_pile"}


def wire(codec: Codec, obj: Any) -> Any:
    """``obj`` as ``codec`` carries it (JSON turns integer keys into strings)."""
    return codec.decode(codec.encode({"x": obj}), 1 << 30)["x"]


def keys_in(obj: Any, out: set[str] | None = None) -> set[str]:
    out = set() if out is None else out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(str(k))
            keys_in(v, out)
    elif isinstance(obj, list):
        for v in obj:
            keys_in(v, out)
    return out


class TableRecord:
    """What the server published at one table: ``records`` (seq -> the table's
    ``EventRecord``), ``holders`` (player id -> seats it held), the seeds of
    its matches and the ``seq`` at which each was revealed."""

    def __init__(self, table: Any) -> None:
        self.id = table.id
        self.records = {rec.seq: rec for rec in table.buffer}
        self.holders: dict[str, set[int]] = {}
        for seat, occ in table.machine.seats.items():
            if occ.player is not None:
                self.holders.setdefault(occ.player, set()).add(seat)
        #: (seq, seat, player or None): who sat down (``seated``) and who freed a seat (``left``)
        self.seatings = sorted((seq, rec.event.data["seat"], rec.event.data.get("player"))
                               for seq, rec in self.records.items()
                               if rec.event.data.get("type") in ("seated", "left"))
        self.revealed: dict[str, int] = {}  # server seed hex -> seq of the match_ended revealing it
        for seq, rec in self.records.items():
            if rec.event.data.get("type") == "match_ended":
                self.revealed[rec.event.data["server_seed"]] = seq
        self.current_seed = table.machine.server_seed.hex()

    def viewers(self, player: str | None, seq: int | None = None) -> set[int | None]:
        """Spectator (None) and the seats ``player`` held at ``seq`` (from the
        ``seated`` and ``left`` events; a seat with none kept is its holder's now;
        without ``seq``: the seats it holds now)."""
        seats = set(self.holders.get(player or "", ()))
        if seq is not None:
            holder: dict[int, str | None] = {}
            for at, seat, who in self.seatings:
                if at <= seq:
                    holder[seat] = who
            seats = {s for s in seats if s not in holder} | {s for s, who in holder.items() if who is not None and who == player}
        return {None} | seats

    def allowed_cards(self, upto: int, viewers: set[int | None]) -> set[str]:
        out: set[str] = set()
        for seq, rec in self.records.items():
            if seq > upto:
                continue
            cards_in(rec.event.data, out)
            for seat, fields in (rec.event.private or {}).items():
                if seat in viewers:
                    cards_in(fields, out)
        return out


def check_frames(frames: Iterable[Frame], tables: dict[str, TableRecord], player: str | None,
                 codec: Codec) -> list[str]:
    """Problems with ``frames`` (one connection's, its player ``player``), in words; [] when all is well."""
    problems: list[str] = []
    unrevealed = {t.current_seed for t in tables.values()}
    for frame in frames:
        kind = frame.get("type")
        table = tables.get(frame.get("table", ""))
        text = repr(frame)
        for seed in unrevealed:
            if seed in text:
                problems.append(f"a server seed not yet revealed in {kind}: {text[:200]}")
        if keys_in(frame) & FORBIDDEN_KEYS:
            problems.append(f"a hidden-state field in {kind}: {sorted(keys_in(frame) & FORBIDDEN_KEYS)}")
        if table is None or kind not in ("event", "snapshot"):
            continue
        viewers = table.viewers(player, frame["seq"])
        if kind == "event":
            rec = table.records.get(frame["seq"])
            if rec is None:
                problems.append(f"{table.id} seq {frame['seq']}: an event the server did not publish")
                continue
            for seed, seq in table.revealed.items():
                if seed in text and frame["seq"] < seq:
                    problems.append(f"{table.id} seq {frame['seq']}: the server seed before its reveal")
            if frame["event"] not in [wire(codec, rec.event.view(v)) for v in viewers]:
                problems.append(f"{table.id} seq {frame['seq']}: {frame['event']!r} is no view of "
                                f"{sorted(viewers, key=str)}")
            if "legal" in frame and rec.legal_seat not in viewers - {None}:
                problems.append(f"{table.id} seq {frame['seq']}: legal actions of seat {rec.legal_seat}")
        else:
            leaked = cards_in(frame.get("state")) - table.allowed_cards(frame["seq"], viewers)
            if leaked:
                problems.append(f"{table.id} snapshot at seq {frame['seq']}: hidden cards {sorted(leaked)}")
            if "legal" in frame and (frame.get("turn") or {}).get("seat") not in viewers - {None}:
                problems.append(f"{table.id} snapshot at seq {frame['seq']}: legal actions of another seat")
    return problems
