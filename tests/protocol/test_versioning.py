"""The protocol's version as the server announces it, the SPEC states it and
the schemas fix it (SPEC "Versioning"): one major and one minor version,
the same in all three."""

from __future__ import annotations

import re
from pathlib import Path

from cardhall.clients.client import Client
from cardhall.protocol.frames import PROTOCOL_MINOR, PROTOCOL_VERSION, welcome
from cardhall.protocol.schemas import documents
from tests.server.conftest import live  # noqa: F401  (fixture)

SPEC = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()


def _versioning_section() -> str:
    return SPEC.split("## Versioning\n", 1)[1].split("\n## ", 1)[0]


def test_the_spec_title_names_the_served_version():
    title = SPEC.splitlines()[0]
    assert title == f"# cardhall protocol v{PROTOCOL_VERSION} (minor version {PROTOCOL_VERSION}.{PROTOCOL_MINOR})"


def test_every_minor_version_up_to_the_served_one_is_listed_once_in_order():
    rows = re.findall(r"^\| (\d+)\.(\d+) \| ", _versioning_section(), flags=re.M)
    assert [(int(a), int(b)) for a, b in rows] == [(PROTOCOL_VERSION, m) for m in range(PROTOCOL_MINOR + 1)]


def test_welcome_carries_both_parts_and_the_schema_fixes_them():
    frame = welcome(7, "p_1", "ann", "t" * 22)
    assert (frame["protocol"], frame["minor"]) == (PROTOCOL_VERSION, PROTOCOL_MINOR)
    schema = documents()["server.json"]["$defs"]["welcome"]
    assert schema["properties"]["protocol"]["const"] == PROTOCOL_VERSION
    assert schema["properties"]["minor"]["const"] == PROTOCOL_MINOR
    assert {"protocol", "minor"} <= set(schema["required"])


async def test_a_live_server_announces_its_minor_version(live):  # noqa: F811
    client = await Client(live.url).connect()
    try:
        welcome_frame = await client.hello("ann")
    finally:
        await client.close()
    assert (welcome_frame["protocol"], welcome_frame["minor"]) == (PROTOCOL_VERSION, PROTOCOL_MINOR)
