"""Hypothesis strategies for client frames: valid messages of protocol v1 and
the same with one field replaced, removed or added, and raw payloads
(garbage, truncated, the wrong frame kind, oversize, deeply nested).

``messages(ctx)`` draws from templates built from ``ctx`` (the tables the
client knows, turn ids it has seen), so valid frames reach deep into the
server (a real table, a real turn) and mutated ones fail at every check on
the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgpack
from hypothesis import strategies as st

from tests.games import GAMES as REGISTERED

Message = dict[str, Any]

#: the games a ``create_table`` names: every registered one, and one no server has
GAMES = [*REGISTERED, "chess"]
ACTION_TYPES = ["fold", "check", "call", "bet", "raise", "all_in", "snowfall", "play", "continue", "sit_out",
                "sit_in", "show", "muck", "start", "pause", "resume", "rematch", "spectator_chat"]
CARDS = ["Ah", "Td", "2c", "Ks", "Xr", "Zz", "", "A"]
#: chat texts (SPEC "Chat"): markup, controls, bidi, zero-width, stacked marks, the length edges
CHAT_TEXTS = ["gg", "<script>alert(1)</script>", "[b]x[/b] [@click=app.quit]q[/]", "\x1b[2J", "a\u202eb", "\u200b",
              "e" + "\u0301" * 6, "x" * 200, "x" * 201, "😀" * 151, "  ", "", "line\nbreak"]

#: values of every kind, with the edges that break parsers and checks
ATOMS = (
    st.none() | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.sampled_from([0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=70) | st.sampled_from(["", "x" * 65, "x" * 200, "\x00", "\ud7ff\U0010ffff", "t_", "🂡"])
)
JUNK = st.recursive(ATOMS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8) | st.integers(-3, 3), inner, max_size=4), max_leaves=12)


@dataclass
class Context:
    """What the fuzzing client knows: its tables and the turn ids it has seen."""

    tables: list[str] = field(default_factory=list)
    turns: list[int] = field(default_factory=lambda: [1])
    #: the last turn offered to this client: (table, turn id, legal actions)
    legal: tuple[str, int, list[dict[str, Any]]] = ("t_000000000000", 1, [{"type": "check"}])


def _templates(draw: Any, ctx: Context) -> list[Message]:
    # indices, not sampled_from(ctx...): what is drawn must not depend on what
    # the client learnt meanwhile (hypothesis replays draws)
    tables = ctx.tables + ["t_000000000000"]
    table = tables[draw(st.integers(0, 63)) % len(tables)]
    turn = ctx.turns[draw(st.integers(0, 63)) % len(ctx.turns)]
    action: Message = {"type": draw(st.sampled_from(ACTION_TYPES))}
    if draw(st.booleans()):
        action["amount"] = draw(st.integers(min_value=-5, max_value=5000))
    if action["type"] == "spectator_chat":
        action["on"] = draw(st.booleans())
    if action["type"] == "play":
        action.update(rank=draw(st.sampled_from(["2", "A", "X", "T"])), count=draw(st.integers(0, 5)))
    if draw(st.booleans()):
        action["cards"] = draw(st.lists(st.sampled_from(CARDS), max_size=3))
    legal_table, legal_turn, legal = ctx.legal
    pick, extra = draw(st.integers(0, 63)), draw(st.integers(0, 10**6))  # drawn whatever ctx holds
    option = legal[pick % len(legal)]
    chosen: Message = {"type": option["type"]}
    if option.get("min") is not None and option.get("max") is not None and option["type"] != "call":
        chosen["amount"] = option["min"] + extra % (option["max"] - option["min"] + 1)
    return [
        {"type": "act", "table": legal_table, "action": chosen, "turn": legal_turn},  # a legal action, on time
        {"type": "act", "table": legal_table, "action": chosen, "turn": legal_turn},
        {"type": "join", "table": legal_table, "role": "player"},  # back to its seat after a leave
        {"type": "ping"},
        {"type": "hello", "name": draw(st.text(min_size=1, max_size=12)), "batch": True},
        {"type": "create_table", "game": draw(st.sampled_from(GAMES)), "seats": draw(st.integers(1, 10)),
         "options": draw(st.sampled_from([{}, {"pause": 0}, {"bot_think": 0.01, "pause": 0}, {"points_to_win": 1},
                                          {"starting_stacks": 10}, {"nope": 1}, {"action_clock": 0.01}])),
         "bots": draw(st.integers(0, 3))},
        {"type": "join", "table": table, "role": draw(st.sampled_from(["player", "spectator"])),
         **draw(st.fixed_dictionaries({}, optional={"seat": st.integers(0, 10), "seed": st.text(max_size=70),
                                                    "since": st.integers(-1, 400)}))},
        {"type": "act", "table": table, "action": action, **({"turn": turn} if draw(st.booleans()) else {})},
        {"type": "leave", "table": table},
        {"type": "chat", "table": legal_table, "text": draw(st.sampled_from(CHAT_TEXTS) | st.text(max_size=220))},
        {"type": "chat", "table": table, "text": draw(st.text(min_size=1, max_size=20))},
    ]


def _paths(message: Message) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for key, value in message.items():
        out.append((key,))
        if isinstance(value, dict):
            out.extend((key, inner) for inner in value)
    return out


@st.composite
def messages(draw: Any, ctx: Context) -> Message:
    """A message with an ``id``: valid, or with one field replaced by anything,
    removed, added, or its ``type`` or ``id`` mangled."""
    message = dict(draw(st.sampled_from(_templates(draw, ctx))))
    message["id"] = draw(st.integers(1, 10**6).map(lambda i: f"f{i}") | st.integers(0, 2**62))
    how = draw(st.sampled_from(["valid", "valid", "replace", "replace", "replace", "remove", "add", "type", "id"]))
    if how == "replace":
        path = draw(st.sampled_from(_paths(message)))
        target = message
        if len(path) == 2:
            target = message[path[0]] = dict(message[path[0]])
        target[path[-1]] = draw(JUNK)
    elif how == "remove":
        path = draw(st.sampled_from(_paths(message)))
        target = message
        if len(path) == 2:
            target = message[path[0]] = dict(message[path[0]])
        target.pop(path[-1], None)
    elif how == "add":
        message[draw(st.text(min_size=1, max_size=10))] = draw(JUNK)
    elif how == "type":
        message["type"] = draw(st.sampled_from(["event", "snapshot", "welcome", "batch", "Ping", "", "act "])
                               | JUNK)
    elif how == "id":
        message["id"] = draw(JUNK)
    return message


def nested(depth: int, leaf: Any = 0) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@st.composite
def raw_payloads(draw: Any, binary: bool) -> bytes | str:
    """Payloads that are not a well-formed frame of the subprotocol (``binary``:
    msgpack), or only just: garbage, truncation, wrong kind, oversize, nesting."""
    valid = msgpack.packb({"type": "ping", "id": 1}) if binary else '{"type":"ping","id":1}'
    kind = draw(st.sampled_from(["garbage", "truncated", "wrong_kind", "oversize", "deep", "scalar", "empty"]))
    if kind == "garbage":
        return draw(st.binary(min_size=1, max_size=300)) if binary else draw(st.text(min_size=1, max_size=300))
    if kind == "truncated":
        cut = draw(st.integers(1, len(valid) - 1))
        return valid[:cut]
    if kind == "wrong_kind":  # a text frame on msgpack, a binary frame on JSON
        return '{"type":"ping","id":1}' if binary else msgpack.packb({"type": "ping", "id": 1})
    if kind == "oversize":  # over the 16 KiB frame limit, under the 1 MiB websocket limit
        size = draw(st.integers(16 * 1024 + 1, 200_000))
        return msgpack.packb({"type": "ping", "pad": "x" * size}) if binary else '{"type":"ping","pad":"' + "x" * size + '"}'
    if kind == "deep":
        depth = draw(st.sampled_from([100, 1000, 1025, 3000, 5000]))
        msg = {"type": "ping", "id": 1, "deep": nested(depth)}
        if binary:
            return msgpack.packb(msg) if depth < 1000 else b"\x81\xa4deep" + b"\x91" * depth + b"\x00"
        import orjson

        return orjson.dumps(msg).decode() if depth < 500 else '{"type":"ping","id":1,"deep":' + "[" * depth + "]" * depth + "}"
    if kind == "scalar":
        value = draw(ATOMS)
        if binary:
            return msgpack.packb(value)
        import orjson

        return orjson.dumps(value).decode()
    return b"" if binary else ""
