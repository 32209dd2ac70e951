"""Who sits in a seat: one :class:`Occupant` per taken seat (G-1, G-5).

A seat belongs to the player id that took it (the token behind that id is the
only one that acts for it) or to a server bot. Bots get a generator of their
own, never the match's (G-2: bot choices are not part of the provable
randomness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cardhall.engine.bots.base import Bot
from cardhall.engine.bots.registry import make_bot
from cardhall.engine.rng import FairRandom

Data = dict[str, Any]

#: longest client seed accepted with ``join`` (characters; its UTF-8 bytes enter the key, G-2)
MAX_SEED = 64


@dataclass(slots=True)
class Occupant:
    """A taken seat. ``player``: the holder's player id (None for a bot);
    ``bot``: the bot's registry name; ``seed``: the client seed given when
    sitting down (G-2); ``bank``: time bank left in seconds (G-3);
    ``timeouts``: consecutive timeouts (two sit the player out, G-3);
    ``left``: the player left during the running match (G-5), so the seat is
    freed when the match ends unless they are back in it by then (G-7,
    :func:`.vacancy.free_left_seats`); ``since``: the ``seq`` of the
    ``seated`` event that seated them (0: seated when the table was created,
    as bots are), so who has sat longest is known (SPEC "The host's controls")."""

    seat: int
    player: str | None
    name: str
    bot: str | None = None
    seed: str = ""
    sitting_out: bool = False
    timeouts: int = 0
    bank: float = 0.0
    left: bool = False
    bot_rng: Data | None = None
    since: int = 0
    brain: Bot | None = field(default=None, repr=False, compare=False)

    @property
    def human(self) -> bool:
        """A person's seat (not a server bot)."""
        return self.bot is None

    def public(self) -> Data:
        """What everyone may know about the seat."""
        out: Data = {"seat": self.seat, "name": self.name, "sitting_out": self.sitting_out}
        if self.player is not None:
            out["player"] = self.player
        if self.bot is not None:
            out["bot"] = self.bot
        return out

    def start_bot(self, game: str, server_seed: bytes) -> None:
        """Give a bot seat its strategy and generator for a new match."""
        rng = FairRandom(server_seed).spawn(f"bot/{self.seat}")
        self.brain = make_bot(game, self.bot, rng)
        self.bot_rng = rng.to_data()

    def resume_bot(self, game: str) -> None:
        """Rebuild a bot's strategy from its stored generator (after a restore)."""
        if self.bot_rng is not None:
            self.brain = make_bot(game, self.bot, FairRandom.from_data(self.bot_rng))

    def bot_position(self) -> int:
        """Bytes the bot's generator has consumed (its place in its stream)."""
        assert self.brain is not None
        return int(self.brain.rng.to_data()["position"])

    def seek_bot(self, game: str, position: int) -> None:
        """The bot's generator moved to ``position`` (a replayed move: the
        input log holds the move and where the generator was after it)."""
        assert self.brain is not None
        data = dict(self.brain.rng.to_data())
        data["position"] = position
        self.brain = make_bot(game, self.bot, FairRandom.from_data(data))

    def to_data(self) -> Data:
        """The seat as plain data (the ``occupants`` of a stored table state)."""
        out: Data = {
            "seat": self.seat, "player": self.player, "name": self.name, "bot": self.bot,
            "seed": self.seed, "sitting_out": self.sitting_out, "timeouts": self.timeouts,
            "bank": self.bank, "left": self.left, "since": self.since,
        }
        if self.brain is not None:
            rng = self.brain.rng
            out["bot_rng"] = rng.to_data()
        return out

    @classmethod
    def from_data(cls, data: Data) -> Occupant:
        """Inverse of :meth:`to_data` (the strategy is rebuilt by :meth:`resume_bot`);
        KeyError on a missing field (``left`` may be missing: False; ``since``: 0)."""
        return cls(
            data["seat"], data["player"], data["name"], data["bot"], data["seed"],
            data["sitting_out"], data["timeouts"], data["bank"], bool(data.get("left", False)), data.get("bot_rng"),
            int(data.get("since", 0)),
        )


def parse_seed(value: Any) -> str:
    """A client seed from ``join``: a string of at most :data:`MAX_SEED`
    characters (ValueError otherwise); its UTF-8 bytes enter the key (G-2)."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_SEED:
        raise ValueError(f"seed must be a string of at most {MAX_SEED} characters")
    return value
