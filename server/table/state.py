"""A table as plain data: what a checkpoint stores (``server/STORAGE.md``, "Format").

The shape is format :data:`~cardhall.server.store.format.FORMAT_VERSION` (3):
``v``, ``id``, ``game``, ``seats``, ``table_options``, ``game_options``,
``owner``, ``status``, ``paused``, ``match``, ``server_seed`` (hex),
``seq``, ``created`` (Unix seconds), ``occupants``, ``engine``, ``turn``
(id, seat, kind, and for a person ``clock``/``bank``: seconds left),
``step``, ``last_result``, ``last_hand_digest``, ``first_dealer``, ``spectator_chat`` (absent: true),
``privacy`` (:class:`~cardhall.server.table.privacy.Privacy`; absent: a public table without an invite),
``banned`` (player ids), ``kicked`` (player id -> the last match it may not sit in), ``owner_away``
(Unix seconds since which the owner's player watches no more, or None) (SPEC "The host's controls",
:mod:`.admission`; absent: none, none, None),
``log`` (the number of the input log's last step this state covers) and
``replay`` (what a replay of the log after it needs: :func:`replay_context`). Older
formats are migrated by :func:`~cardhall.server.store.format.unpack_state`
before they get here. The undelivered outputs are not part of it; the
subscribers and the service's flags are only in ``replay`` (a restored table
starts with none).
"""

from __future__ import annotations

from typing import Any

from cardhall.server.store.format import FORMAT_VERSION
from cardhall.server.store.format import digest as packed_digest
from cardhall.server.table.clock import PausedClock, TurnClock
from cardhall.server.table.core import CONTINUE, TableCore
from cardhall.server.table.inputs import Close
from cardhall.server.table.log import code_version
from cardhall.server.table.occupant import Occupant
from cardhall.server.table.privacy import Privacy
from cardhall.server.table.subscribers import stored_key
from cardhall.server.table.turns import legal_now

Data = dict[str, Any]


def to_data(t: TableCore, mono: float, shared: bool = False) -> Data:
    """Everything about ``t`` as plain data, a running clock paused at
    monotonic time ``mono`` (seconds left). ``shared``: the engine's part is
    its ``state_data()``, sharing lists with the live engine (for a checkpoint
    packed before the table changes again)."""
    turn: Data | None = None
    if t.turn_id is not None:
        turn = {"id": t.turn_id, "seat": t.turn_seat, "kind": t.turn_kind}
        if t.clock is not None:
            clock = t.clock.pause(mono) if isinstance(t.clock, TurnClock) else t.clock
            turn["clock"], turn["bank"] = clock.clock, clock.bank
    engine = t.engine
    return {
        "v": FORMAT_VERSION, "id": t.id, "game": t.game, "seats": t.n_seats,
        "table_options": t.topts, "game_options": t.gopts, "owner": t.owner,
        "status": t.status, "paused": t.paused, "match": t.match,
        "server_seed": t.server_seed.hex(), "seq": t.seq, "created": t.created,
        "occupants": [o.to_data() for _, o in sorted(t.seats.items())],
        "engine": (engine.state_data() if shared else engine.to_data()) if engine is not None else None,
        "turn": turn, "step": t.step_id, "last_result": t.last_result,
        "last_hand_digest": t.last_hand_digest, "first_dealer": t.first_dealer,
        "spectator_chat": t.spectator_chat, "privacy": t.privacy.to_data(),
        "banned": sorted(t.banned), "kicked": dict(sorted(t.kicked.items())), "owner_away": t.owner_away_since,
        "log": t.logged, "replay": replay_context(t, mono),
    }


def replay_context(t: TableCore, mono: float) -> Data:
    """What a replay of the input log after this state needs that the state
    itself does not hold (``server/STORAGE.md``, "The input log"): the code
    that may replay it (``version``), the time the state was taken at
    (``w``/``m``: wall and monotonic seconds), a running clock exactly
    (``clock``: ``[started, clock, bank]``, the turn's ``clock``/``bank``
    above being the seconds left at ``m``), the subscribers (``subs``: key,
    viewer and player id or None: presence is a rule, G-4/G-5, and a
    ``rename`` reaches those who watch), and the service's flags
    (``stopping``, ``stalled``, ``deferred``: the reasons of the closes held
    while stalled)."""
    clock = t.clock
    return {
        "version": code_version(), "w": t.now.wall + (mono - t.now.mono), "m": mono,
        "clock": [clock.started, clock.clock, clock.bank] if isinstance(clock, TurnClock) else None,
        "subs": [[stored_key(key), viewer, t.subscribers.player(key)] for key, viewer in t.subscribers.items()],
        "stopping": t.service_stopping, "stalled": t.stalled,
        "deferred": [inp.reason for inp in t.deferred if isinstance(inp, Close)],
    }


def digest(t: TableCore, mono: float) -> str:
    """A digest of ``t``'s state at ``mono`` without its replay context: what
    ``Settings.verify_replay`` logs after each step and recovery compares."""
    data = to_data(t, mono)
    del data["replay"]
    return packed_digest(data)


def check_version(data: Data) -> None:
    """ValueError unless ``data`` is in the current format."""
    if data.get("v") != FORMAT_VERSION:
        raise ValueError(f"table state version {data.get('v')!r} is not {FORMAT_VERSION}")


def load(t: TableCore, data: Data) -> None:
    """Fill ``t`` (built with ``data``'s id, game, seats, options, owner and
    server seed) from the rest of :func:`to_data`'s output; a stored clock
    comes back paused with the time it had left. Raises KeyError or
    ValueError on malformed data (the engine's ``from_data`` too)."""
    check_version(data)
    t.status = data["status"]
    t.paused = data["paused"]
    t.match = data["match"]
    t.seq = data["seq"]
    t.created = data["created"]
    t.last_result = data["last_result"]
    t.last_hand_digest = data.get("last_hand_digest")
    t.first_dealer = data.get("first_dealer")
    t.spectator_chat = data.get("spectator_chat", True) is not False
    t.privacy = Privacy.from_data(data.get("privacy"))
    t.banned = set(data.get("banned", ()))
    t.kicked = {str(player): int(last) for player, last in data.get("kicked", {}).items()}
    t.owner_away_since = data.get("owner_away")
    t.logged = data["log"]
    for od in data["occupants"]:
        occ = Occupant.from_data(od)
        if occ.bot is not None:
            occ.resume_bot(t.game)
        t.seats[occ.seat] = occ
    if data["engine"] is not None:
        t.engine = t.cls.from_data(data["engine"])
    turn = data["turn"]
    if turn is not None:
        t.turn_id, t.turn_seat, t.turn_kind = turn["id"], turn["seat"], turn["kind"]
        if "clock" in turn:
            t.clock = PausedClock(turn["clock"], turn["bank"])
        if t.engine is not None and t.engine.to_act is not None and t.turn_kind != CONTINUE:
            t.turn_legal = legal_now(t)
    t.step_id = data["step"]
