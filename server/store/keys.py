"""The Redis key names of one cluster (one key prefix), in one place.

The keyspace is cut into :data:`PARTITIONS` **partitions**. A table belongs
to one, by its id (:func:`partition_of`), and every key of the table (state,
input log, event stream, hands, lease, fencing epoch, its channel) and of its
partition (the partition's table index, lobby, quarantine and marker) carries
the partition's hash tag, ``P:{pN.k}:...``. On a Redis Cluster a partition is
therefore one hash slot: every script of a table, and a group commit of all
the tables of one partition, touches one slot only. The tags are chosen so
that partition ``N`` lands in the ``N``-th of :data:`PARTITIONS` equal bands of
the 16,384 slots: a cluster whose masters hold contiguous slot ranges (what
``redis-cli --cluster create`` makes) holds about the same number of
partitions on each master. The keys of the node registry share one tag
(``{nodes}``), a node's inbox carries the node id as its tag, and a player's
keys carry none (each is read and written alone, so they spread over the
shards). ``server/STORAGE.md``, "Redis key layout".

>>> k = Keys("cardhall")
>>> partition_of("t_1"), k.state("t_1"), k.lease("t_1")
(59, 'cardhall:{p59.115}:t_1', 'cardhall:{p59.115}:t_1:lease')
>>> k.tables(59), k.channel("t_1"), k.inbox("n1")
('cardhall:{p59.115}:tables', 'cardhall:{p59.115}:t_1:ch', 'cardhall:inbox:{n1}')
>>> [slot(tag(n)) // (SLOTS // PARTITIONS) for n in (0, 1, 63)]
[0, 1, 63]
"""

from __future__ import annotations

import binascii
from collections.abc import Iterable

#: hash slots of a Redis Cluster
SLOTS = 16384
#: partitions of the keyspace: fixed, as they are part of every table key's name
PARTITIONS = 64


def slot(tag_or_key: str) -> int:
    """The Redis Cluster hash slot of a key (its hash tag, when it has one:
    the text between the first ``{`` and the next ``}``, if not empty):
    CRC16 (XMODEM) modulo 16,384, as Redis computes it."""
    start = tag_or_key.find("{")
    if start >= 0:
        end = tag_or_key.find("}", start + 1)
        if end > start + 1:
            tag_or_key = tag_or_key[start + 1:end]
    return binascii.crc_hqx(tag_or_key.encode(), 0) % SLOTS


def _find_tag(n: int) -> str:
    """The first tag ``p{n}.{k}`` whose slot lies in the middle half of band ``n``."""
    band = SLOTS // PARTITIONS
    low, high = n * band + band // 4, n * band + 3 * band // 4
    k = 0
    while not low <= slot(f"p{n}.{k}") < high:
        k += 1
    return f"p{n}.{k}"


#: the hash tag of each partition (about 30 CRCs each to find, once per process)
TAGS: tuple[str, ...] = tuple(_find_tag(n) for n in range(PARTITIONS))


def tag(n: int) -> str:
    """Partition ``n``'s hash tag."""
    return TAGS[n]


def partition_of(table: str) -> int:
    """The partition of table id ``table`` (0 to :data:`PARTITIONS` - 1): CRC16 of the id."""
    return binascii.crc_hqx(table.encode(), 0) % PARTITIONS


def by_partition(tables: Iterable[str]) -> dict[int, list[str]]:
    """``tables`` grouped by partition, each group in the order given."""
    out: dict[int, list[str]] = {}
    for table in tables:
        out.setdefault(partition_of(table), []).append(table)
    return out


#: tables whose commit keys :meth:`Keys.commit_keys` keeps (past it, it starts again)
COMMIT_KEYS_KEPT = 65_536


class Keys:
    """Key and channel names under ``prefix``."""

    __slots__ = ("prefix", "players", "nodes", "seen", "placing", "old_meta", "old_tables", "old_quarantine", "old_lobby",
                 "_bases", "_commit_keys")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        #: hash: token hash -> msgpack [player id, name], as stored before players
        #: expired (read when a token is not found under :meth:`player`, and moved there)
        self.players = f"{prefix}:players"
        #: hash: node id -> its heartbeat as JSON (address, load, tables)
        self.nodes = f"{prefix}:{{nodes}}"
        #: sorted set: node id -> when its heartbeat expires (Redis time, ms)
        self.seen = f"{prefix}:{{nodes}}:seen"
        #: hash: table id -> ``node|ms``, a table placed on that node (Redis time) not yet
        #: counted in the node's heartbeat (the PLACE script of ``server/cluster/scripts.py``)
        self.placing = f"{prefix}:{{nodes}}:placing"
        #: the keys of one whole store before partitions (moved by the first node that starts)
        self.old_meta = f"{prefix}:meta"
        self.old_tables = f"{prefix}:tables"
        self.old_quarantine = f"{prefix}:quarantine"
        self.old_lobby = f"{prefix}:lobby"
        self._bases = tuple(f"{prefix}:{{{t}}}" for t in TAGS)
        self._commit_keys: dict[str, tuple[str, ...]] = {}

    # -- one partition -------------------------------------------------------
    def partition(self, n: int) -> str:
        """The hash-tagged stem of partition ``n``'s keys."""
        return self._bases[n]

    def meta(self, n: int) -> str:
        """Hash: format version, time and generation; present while partition
        ``n`` holds cardhall's data (a shard that lost its data lost it)."""
        return self._bases[n] + ":meta"

    def tables(self, n: int) -> str:
        """Set: ids of partition ``n``'s tables to serve (open, or finished and not yet closed)."""
        return self._bases[n] + ":tables"

    def lobby(self, n: int) -> str:
        """Hash: table id -> its public info as JSON (partition ``n``'s share of the lobby)."""
        return self._bases[n] + ":lobby"

    def quarantine(self, n: int) -> str:
        """Hash: table id -> why it was set aside (partition ``n``'s tables)."""
        return self._bases[n] + ":quarantine"

    # -- one table ------------------------------------------------------------
    def base(self, table: str) -> str:
        """The stem of ``table``'s keys (its partition's hash tag, then the id)."""
        return f"{self._bases[partition_of(table)]}:{table}"

    def state(self, table: str) -> str:
        """String: the table's state (msgpack)."""
        return self.base(table)

    def events(self, table: str) -> str:
        """Stream: the table's events, entry id ``{seq}-0``."""
        return self.base(table) + ":events"

    def hands(self, table: str) -> str:
        """List: the table's finished hands."""
        return self.base(table) + ":hands"

    def handseq(self, table: str) -> str:
        """String: the ``seq`` of the table's last stored hand."""
        return self.base(table) + ":handseq"

    def log(self, table: str) -> str:
        """The table's input log since its last full state (a list of packed entries)."""
        return self.base(table) + ":log"

    def logn(self, table: str) -> str:
        """The number of the last input log step stored (the log is written once per step, by this)."""
        return self.base(table) + ":logn"

    def lease(self, table: str) -> str:
        """String with a TTL: the owner's fencing token ``node|nonce|epoch``."""
        return self.base(table) + ":lease"

    def epoch(self, table: str) -> str:
        """String: the table's fencing epoch, incremented by every claim."""
        return self.base(table) + ":epoch"

    def commit_keys(self, table: str) -> tuple[str, ...]:
        """The keys a commit names for ``table``, in the commit script's order:
        its partition's :meth:`meta`, :meth:`tables` and :meth:`lobby`, then its
        :meth:`state`, :meth:`events`, :meth:`hands`, :meth:`handseq`,
        :meth:`lease`, :meth:`epoch`, :meth:`log` and :meth:`logn`. Made once
        per table and kept (every checkpoint names them), for at most
        :data:`COMMIT_KEYS_KEPT` tables at a time."""
        found = self._commit_keys.get(table)
        if found is None:
            if len(self._commit_keys) >= COMMIT_KEYS_KEPT:
                self._commit_keys.clear()
            n = partition_of(table)
            found = self._commit_keys[table] = (
                self.meta(n), self.tables(n), self.lobby(n), self.state(table), self.events(table), self.hands(table),
                self.handseq(table), self.lease(table), self.epoch(table), self.log(table), self.logn(table))
        return found

    def channel(self, table: str) -> str:
        """Sharded pub/sub channel: the table's committed events for other nodes, and owner changes."""
        return self.base(table) + ":ch"

    def table_of_channel(self, channel: str) -> str:
        """The table id of a table channel name (:meth:`channel`)."""
        return channel[channel.index("}") + 2:-3]

    def inbox(self, node: str) -> str:
        """Sharded pub/sub channel: messages to node ``node`` (inputs for its tables, frames for its clients)."""
        return f"{self.prefix}:inbox:{{{node}}}"

    # -- players ----------------------------------------------------------------
    def player(self, token_hash: str) -> str:
        """String: msgpack ``[player id, name]`` of the player whose token hashes to
        ``token_hash``; expires ``player_expiry`` after its last use."""
        return f"{self.prefix}:player:{token_hash}"

    def player_id(self, player: str) -> str:
        """String: the token hash of player ``player`` (so a node that sees the
        player seated can renew both keys); expires with :meth:`player`."""
        return f"{self.prefix}:player-id:{player}"

    def player_name(self, player: str) -> str:
        """String: the name player ``player`` was last renamed to (UTF-8; absent:
        never renamed); expires with :meth:`player`."""
        return f"{self.prefix}:player-name:{player}"

    # -- layouts before this one ------------------------------------------------------
    def old_base(self, table: str) -> str:
        """The stem of ``table``'s keys before partitions (``P:{id}``)."""
        return f"{self.prefix}:{{{table}}}"

    def legacy_state(self, table: str) -> str:
        """The state key of a table stored before keys were hash-tagged (``P:t:{id}``)."""
        return f"{self.prefix}:t:{table}"
