"""The conformance kit (``protocol/conformance/``) describes this server: its
codec cases decode to their values and validate against the schemas, its G-2
vectors come out of both the engine's generator and the SPEC's algorithm as
implemented again in ``test_g2_replay``, and every error case gets its error
from a live server on both subprotocols. Every error code is either provoked
by a case or listed, with a reason, as one no lone client can provoke."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path

import msgpack
import orjson
import pytest

from cardhall.engine.rng import FairRandom, derive_key
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.protocol.compact import expand
from cardhall.protocol.conformance import FILES, load
from cardhall.protocol.conformance.run import CODEC_NAMES, Runner, main
from cardhall.protocol.errors import CODES
from cardhall.protocol.frames import PROTOCOL_MINOR, PROTOCOL_VERSION, welcome
from cardhall.protocol.schemas import FrameValidator
from tests.protocol.test_g2_replay import G2
from tests.server.conftest import TEST_SETTINGS, running_server

KIT = Path(__file__).resolve().parents[2] / "protocol" / "conformance"
STANDARD = [r + s for s in "cdhs" for r in "23456789TJQKA"]
DECKS = {"standard_deck": STANDARD, "standard_deck_with_jokers": STANDARD + ["Xr", "Xb"],
         "avalanche_two_decks": STANDARD * 2 + ["Xr", "Xb"] * 3}


def test_every_file_names_the_served_version():
    for name in FILES:
        assert load(name)["version"] == f"{PROTOCOL_VERSION}.{PROTOCOL_MINOR}", name
    with pytest.raises(ValueError):
        load("nothing")


@pytest.mark.parametrize("case", load("codec")["cases"], ids=lambda c: c["name"])
def test_codec_cases_decode_to_their_value_on_both_subprotocols(case):
    if isinstance(case["value"], list):  # a compact events array (1.8): the codecs' decode takes only maps
        assert orjson.loads(case["json"]) == case["value"]
        assert msgpack.unpackb(bytes.fromhex(case["msgpack_hex"]), raw=False) == case["value"]
    else:
        assert CODECS[JSON].decode(case["json"], 1 << 24) == case["value"]
        assert CODECS[MSGPACK].decode(bytes.fromhex(case["msgpack_hex"]), 1 << 24) == case["value"]
    if case["name"] != "unknown_fields_and_types":  # a newer minor version's frame: not this version's schema
        value = case["value"]
        frames = value["frames"] if isinstance(value, dict) and value["type"] == "batch" else [value]
        validator = FrameValidator()
        if "layouts" in case:  # a compact case: read under the layouts of a welcome
            validator.check_server(welcome(1, "p_1", "ann", "t" * 22, layouts=case["layouts"]))
        for frame in frames:
            validator.check_server(frame)
        if "layouts" in case:
            expanded = [expand(f, case["layouts"]) if isinstance(f, list) else f for f in frames]
            assert expanded == (case["expands_to"] if isinstance(value, dict) else [case["expands_to"]])


@pytest.mark.parametrize("vector", load("g2")["vectors"], ids=lambda v: v["name"])
def test_g2_vectors_from_the_engine_and_from_the_spec_alone(vector):
    server_seed = bytes.fromhex(vector["server_seed"])
    seeds = [s.encode() for s in vector["client_seeds"]]
    assert derive_key(server_seed, seeds).hex() == vector["key"] == G2(server_seed, seeds).key.hex()
    assert FairRandom(server_seed, seeds).read(64).hex() == vector["stream_first_64_bytes"]
    assert G2(server_seed, seeds).read(64).hex() == vector["stream_first_64_bytes"]
    draws = vector["randbelow"]
    ours, theirs = FairRandom(server_seed, seeds), G2(server_seed, seeds)
    assert [ours.randbelow(n) for n in draws["n"]] == draws["results"] == [theirs.randbelow(n) for n in draws["n"]]
    assert ours.position == draws["bytes_read"]
    for label, deck in DECKS.items():
        shuffle = vector[f"shuffle_{label}"]
        ours_deck, theirs_deck = list(deck), list(deck)
        g = FairRandom(server_seed, seeds)
        g.shuffle(ours_deck)
        G2(server_seed, seeds).shuffle(theirs_deck)
        assert ours_deck == theirs_deck == shuffle["after"] and len(deck) == shuffle["deck_size"]
        assert g.position == shuffle["bytes_read"]


def test_the_spec_prints_the_first_vectors():
    spec = (KIT.parent / "SPEC.md").read_text()
    zero = load("g2")["vectors"][0]
    assert zero["key"] in spec and zero["stream_first_64_bytes"][:32] in spec


def test_every_error_code_is_covered_or_said_not_to_be():
    errors = load("errors")
    provoked = {c["expect"]["code"] for c in errors["cases"] if c["expect"]["type"] == "error"}
    assert provoked | set(errors["not_covered"]) == set(CODES)
    assert not provoked & set(errors["not_covered"])
    names = [c["name"] for c in errors["cases"]]
    assert len(names) == len(set(names))
    spec = (KIT.parent / "SPEC.md").read_text()
    sections = set(re.findall(r"^#+ (.+)$", spec, flags=re.M))
    assert {c["spec"] for c in errors["cases"]} <= sections


async def test_every_error_case_against_a_live_server():
    async with running_server(replace(TEST_SETTINGS, operator_key="conformance")) as srv:
        outcomes = await Runner(srv.url, "conformance").run_all(sorted(CODEC_NAMES))
        assert len(outcomes) == sum(len(c.get("codecs", CODEC_NAMES)) for c in load("errors")["cases"])
        failed = [(o.codec, o.case, o.problem) for o in outcomes if o.problem is not None]
        assert not failed


async def test_the_runner_command_line_reports_each_case(capsys):
    async with running_server() as srv:
        status = await asyncio.to_thread(main, ["--server", srv.url, "--codec", "json", "--case", "unknown_type",
                                                "--case", "id_null_is_no_id"])
    out = capsys.readouterr().out
    assert status == 0 and "ok   json     unknown_type" in out and "2 of 2 passed" in out
