"""README's "Trying skillc on your logs", followed literally: its three commands run in a folder
holding the example studio and transcripts, each succeeds and says what the README says; the
HTML report they write is opened in the real headless Chromium and its screenshot is the
README's picture (docs/img/replay-report.png when SKILLC_SCREENSHOTS=docs)."""
from __future__ import annotations

import contextlib
import glob
import io
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium import chromium
from helpers.console_live import IMG

from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Trying skillc on your logs")
    return text[start:text.index("\n## ", start + 5)]


def commands() -> list[list[str]]:
    block = re.search(r"```sh\n(.*?)```", section(), re.S)
    assert block, "no shell block in the section"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[tuple[int, str, str]]]]:
    """The README's commands run in a fresh folder holding the retail example, globs expanded as a
    shell would."""
    here = tmp_path_factory.mktemp("readme-replay")
    shutil.copytree(ROOT / "examples" / "retail", here / "examples" / "retail")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(here)
        mp.delenv("SKILLC_CONFIG", raising=False)
        results = []
        for argv in commands():
            assert argv[0] == "skillc", argv
            argv = [m for a in argv for m in (sorted(glob.glob(a)) if "*" in a else [a])]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = skillc(argv[1:])
            results.append((status, out.getvalue(), err.getvalue()))
        yield here, results


def test_the_three_commands_run_and_say_what_the_readme_says(ran: tuple[Path, list[tuple[int, str, str]]]) -> None:
    here, results = ran
    assert len(results) == 3 and [s for s, _, _ in results] == [0, 0, 0], results
    human = results[1][1]
    assert "9 conversation(s)" in human
    assert "invented-order-id #2 cancel_pending_order: REFUSED PARAM_PROVENANCE_REJECTED" in human
    assert "cancel-delivered #4 cancel_pending_order: REFUSED RULE_VIOLATED (skillc.40901): [cancel_only_pending]" in human
    assert "cancel-other-customer #3 cancel_pending_order: REFUSED RULE_VIOLATED" in human
    assert "cancel-pending #4 cancel_pending_order: APPROVAL ASKED; user before: \"Yes please.\" (confirmed)" in human
    assert "exchange-gift-card-short #8 exchange_delivered_order_items: REFUSED RULE_VIOLATED" in human
    assert "report written to replay-report.html" in results[2][2]
    html = (here / "replay-report.html").read_text(encoding="utf-8")
    assert "wrong calls stopped" in html and "<svg" in html and "7 / 7" in html
    assert "PARAM_PROVENANCE_REJECTED" in section() and "RULE_VIOLATED" in section() and "docs/img/replay-report.png" in section()


@pytest.fixture(scope="module")
def browser(ran: Any) -> Iterator[Any]:
    """Chromium, started after the commands ran (see helpers.chromium)."""
    yield from chromium()


def test_the_readme_screenshot_is_the_report_in_chromium(ran: tuple[Path, Any], browser: Any) -> None:
    here, _ = ran
    ctx = browser.new_context(viewport={"width": 1280, "height": 1500})
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((here / "replay-report.html").as_uri())
        page.wait_for_load_state("load")
        assert errors == [] and page.locator("svg.chart").is_visible()
        assert page.locator("details").count() == 9  # one per conversation, those with a stopped call open
        assert page.locator("details[open]").count() == 9
        page.screenshot(path=str(IMG / "replay-report.png"))
    finally:
        ctx.close()
