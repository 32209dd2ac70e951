"""A table's privacy as data: its invite, its password's record, who it let in, seat requests.

Kept with the table's state (``server/STORAGE.md``, "Format": ``privacy``);
the rules that use it are :mod:`.access` and :mod:`.approval` (SPEC
"Private tables").

>>> p = Privacy("secret", None, {"p_1": None})
>>> Privacy.from_data(p.to_data()) == p, Privacy.from_data(None) == Privacy()
(True, True)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

Data = dict[str, Any]


@dataclass(slots=True)
class SeatRequest:
    """A player's request for a seat: the ``name`` and ``seat`` (None: any)
    and client ``seed`` of its join, and when it lapses (``lapses``, Unix seconds)."""

    name: str
    seat: int | None
    seed: str
    lapses: float


@dataclass(slots=True)
class Privacy:
    """A table's secrets and its lists (see the module docstring).
    ``invite``: the secret of the invite link (None: a table stored before
    1.5); ``password``: the scrypt record (None: no password); ``invited``
    and ``unlocked``: players let in with the invite, with the password
    (ordered, oldest first); ``requests``: player -> its waiting
    :class:`SeatRequest`; ``denied``: player -> the match it was denied a seat for."""

    invite: str | None = None
    password: Data | None = None
    invited: dict[str, None] = field(default_factory=dict)
    unlocked: dict[str, None] = field(default_factory=dict)
    requests: dict[str, SeatRequest] = field(default_factory=dict)
    denied: dict[str, int] = field(default_factory=dict)

    def to_data(self) -> Data:
        """As stored with the table's state (``server/STORAGE.md``, "Format": ``privacy``)."""
        return {"invite": self.invite, "password": self.password, "invited": list(self.invited),
                "unlocked": list(self.unlocked),
                "requests": [[p, r.name, r.seat, r.seed, r.lapses] for p, r in self.requests.items()],
                "denied": [[p, m] for p, m in self.denied.items()]}

    @classmethod
    def from_data(cls, data: Data | None) -> Privacy:
        """From :meth:`to_data`'s output (None: a table stored before 1.5).
        KeyError/ValueError/TypeError on malformed data."""
        if data is None:
            return cls()
        return cls(data["invite"], data["password"], dict.fromkeys(map(str, data["invited"])),
                   dict.fromkeys(map(str, data["unlocked"])),
                   {str(p): SeatRequest(str(n), s, str(seed), float(at)) for p, n, s, seed, at in data["requests"]},
                   {str(p): int(m) for p, m in data["denied"]})


def invite_digest(invite: str) -> str:
    """SHA-256 (hex) of an invite: what other nodes and stored hands keep of it
    (the invite is 128 random bits: a plain hash cannot be turned back)."""
    return hashlib.sha256(invite.encode()).hexdigest()
