"""A client seed given with ``join`` stays until the match starts: a later
``join`` without ``seed`` keeps it, a later one with a seed replaces it
(SPEC "Fields and types", RULES G-2); ``match_started.client_seeds`` shows
the seeds the match uses."""

from __future__ import annotations


async def test_a_later_join_without_a_seed_keeps_the_seed_and_one_with_a_seed_replaces_it(live):
    ann = await live.client("ann")
    bob = await live.client("bob")
    carol = await live.client("carol")
    watcher = await live.client("eve")
    table = await ann.create_table("loco_poker", seats=4, options={"pause": 0, "bot_think": 0}, bots=1)
    await watcher.join(table, role="spectator")
    await ann.join(table, role="player", seed="ann's seed")
    await ann.join(table, role="player")                            # no seed: ann's stays
    await bob.join(table, role="player", seed="bob's first seed")
    await bob.join(table, role="player", seed="bob's second seed")  # the match has not started: replaced
    await carol.join(table, role="player")                          # the last seat: the match starts
    while True:
        frame = await watcher.next_event(table, timeout=10)
        if frame["event"]["type"] == "match_started":
            break
    assert frame["event"]["client_seeds"] == {"1": "ann's seed", "2": "bob's second seed"}
    for c in (ann, bob, carol, watcher):
        await c.close()
