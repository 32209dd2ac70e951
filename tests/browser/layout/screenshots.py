"""The README's and docs' screenshots of every game, drawn from the recorded snapshots.

``.venv/bin/python -m tests.browser.layout.screenshots [--out docs/screenshots]`` starts a server of
its own, draws one recorded moment of each game (``snapshots/``, :mod:`tests.browser.layout.record`)
with the real client through :class:`~tests.browser.layout.harness.Harness`, and saves it at the
phone's size and the laptop's: ``<game>-phone.png`` (390x844: your turn, six seats or the game's
largest count below) and ``<game>-desktop.png`` (1366x768: a showdown at the same count). The same
recordings give the same pictures, so the files change only when the client's drawing does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.layout.harness import Harness, Snapshot, load_snapshots
from tests.server.conftest import TEST_SETTINGS, running_server

ROOT = Path(__file__).resolve().parents[3]
#: (file suffix, viewport width, height, the moment drawn)
SHOTS = (("phone", 390, 844, "turn"), ("desktop", 1366, 768, "showdown"))
#: the seat count drawn: this many, or the game's largest below it
SEATS = 6


def chosen(snapshots: list[Snapshot], moment: str) -> dict[str, Snapshot]:
    """game -> the snapshot of ``moment`` at :data:`SEATS` seats, or the largest count below it."""
    out: dict[str, Snapshot] = {}
    for snap in sorted(snapshots, key=lambda s: s.seats):
        if snap.moment == moment and snap.seats <= SEATS:
            out[snap.game] = snap
    return out


async def take(out: Path) -> list[Path]:
    """Draw and save every game's pictures into ``out``; the files written."""
    from playwright.async_api import async_playwright

    snapshots = load_snapshots()
    written = []
    async with running_server(TEST_SETTINGS) as srv, async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        harness = Harness(snapshots)
        try:
            await harness.open(browser, srv.http)
            for suffix, width, height, moment in SHOTS:
                await harness.size(width, height)
                for game, snap in chosen(snapshots, moment).items():
                    await harness.show(snap)
                    path = out / f"{game}-{suffix}.png"
                    await harness.page.screenshot(path=str(path))
                    written.append(path)
        finally:
            await harness.close()
            await browser.close()
    if harness.errors:
        raise RuntimeError(f"the page reported errors: {harness.errors}")
    return written


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args(argv)
    if CHROMIUM is None:
        print("Chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(take(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
