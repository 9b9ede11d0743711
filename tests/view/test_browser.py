"""``tokstream view`` in a real browser: Debian's Chromium driven by Playwright.

``tokstream view --port 0`` runs as its own process; its page is typed into like a user would, and its rendered spans, tooltip and
boundary marker are checked against the library; then the ``--html`` page is opened
from a file and every request it makes is recorded: none may leave that file.

Skips (with the reason) only when Playwright or Chromium is not installed. Playwright's
own browser download is never used: ``executable_path`` points at the system Chromium.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import tokstream
from tokstream.view import add_arguments, run

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NAMES = ("cl100k_base", "o200k_base")
# An emoji split over two tokens, combining text, a newline, and an unstable tail.
TEXT = "Hello world 👋🏽, naïve café 日本語\n  def f(x): return x**2 and how are"


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and Path("/usr/bin/chromium").exists():
        path = "/usr/bin/chromium"
    if path is None:
        pytest.skip("Chromium not installed: apt-get install -y chromium")
    return path


@pytest.fixture(scope="module")
def toks() -> dict[str, tokstream.Tokenizer]:
    # A third tokenizer, so that choosing two of them is a real choice.
    return {name: tokstream.load(name) for name in (*NAMES, "r50k_base")}


class Served(NamedTuple):
    """A running ``tokstream view`` command's address."""

    url: str


@pytest.fixture(scope="module")
def server(toks: dict[str, tokstream.Tokenizer], view_command: Any) -> Iterator[Served]:
    """``tokstream view --port 0`` itself, in its own process, as a user starts it."""
    with view_command(*(a for name in toks for a in ("-t", name))) as url:
        yield Served(url)


@pytest.fixture()
def browser_context(tmp_path: Path) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        pytest.skip(f"Chromium not installed: the playwright package is missing ({e}); pip install playwright")
    executable = _chromium()
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh user data dir per test
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def _span_ids(page: Any, name: str) -> list[int]:
    ids: list[int] = page.eval_on_selector_all(
        f'.panel[data-tokenizer="{name}"] .tokens .tok', "spans => spans.map(s => Number(s.dataset.id))"
    )
    return ids


def _stable_spans_before_marker(page: Any, name: str) -> int:
    found: int = page.eval_on_selector(
        f'.panel[data-tokenizer="{name}"] .tokens',
        """box => {
            const kids = Array.from(box.children);
            const at = kids.findIndex(k => k.classList.contains("boundary"));
            if (at < 0 || box.querySelectorAll(".boundary").length !== 1) return -1;
            return kids.slice(0, at).filter(k => k.classList.contains("tok")).length;
        }""",
    )
    return found


def _wait_rendered(page: Any, text: str, names: tuple[str, ...]) -> None:
    key = f"{len(text)}:{','.join(names)}"
    page.wait_for_selector(f'#panels[data-status="ready"][data-key="{key}"]', state="attached", timeout=30_000)


def test_served_page(
    browser_context: Any, server: Served, toks: dict[str, tokstream.Tokenizer], tmp_path: Path
) -> None:
    page = browser_context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url)
    page.wait_for_selector('#tokenizers input[value="r50k_base"]')

    page.fill("#text", TEXT)
    page.uncheck('#tokenizers input[value="r50k_base"]')
    for name in NAMES:
        page.check(f'#tokenizers input[value="{name}"]')
    _wait_rendered(page, TEXT, NAMES)

    assert page.locator(".panel").count() == 2
    for name in NAMES:
        tok = toks[name]
        ids = tok.encode(TEXT)
        assert _span_ids(page, name) == ids
        assert page.inner_text(f'.panel[data-tokenizer="{name}"] .count') == str(len(ids))
        stable_len = tok.encode_stable(TEXT).stable_len
        assert 0 < stable_len < len(ids)  # the text ends in an open word: some tokens may change
        assert _stable_spans_before_marker(page, name) == stable_len
        header = page.inner_text(f'.panel[data-tokenizer="{name}"] .panel-head')
        assert f"boundary at character {tok.stable_boundary(TEXT)}" in header, header
        unstable = page.locator(f'.panel[data-tokenizer="{name}"] .tok.unstable').count()
        assert unstable == len(ids) - stable_len
        indexes = page.eval_on_selector_all(
            f'.panel[data-tokenizer="{name}"] .tokens .tok', "spans => spans.map(s => Number(s.dataset.index))"
        )
        assert indexes == list(range(len(ids)))

    # Hover the second half of the emoji (a token that is only part of a character).
    tok = toks["cl100k_base"]
    ids, offsets = tok.encode_with_offsets(TEXT)
    k = next(i for i in range(1, len(ids)) if offsets[i][0] < offsets[i - 1][1])
    page.hover(f'.panel[data-tokenizer="cl100k_base"] .tok[data-index="{k}"]')
    page.wait_for_selector("#tooltip:not([hidden])")
    assert page.inner_text("#tooltip .tt-bytes .tt-value") == tok.token_bytes(ids[k]).hex(" ")
    assert page.inner_text("#tooltip .tt-id .tt-value") == str(ids[k])
    assert page.inner_text("#tooltip .tt-offsets .tt-value") == f"{offsets[k][0]}–{offsets[k][1]}"
    page.screenshot(path=str(tmp_path / "view.png"), full_page=True)
    assert (tmp_path / "view.png").stat().st_size > 0

    # The append box: the re-tokenized tail, as the library gives it.
    page.select_option("#tool-tokenizer", "o200k_base")
    page.fill("#suffix", "na and more")
    o200k = toks["o200k_base"]
    old, new = o200k.encode(TEXT), o200k.encode(TEXT + "na and more")
    first = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)  # " are" + "na": " arena"
    page.wait_for_function(
        "n => document.querySelectorAll('#append-tail .tok').length === n", arg=len(new) - first, timeout=30_000
    )
    assert page.eval_on_selector_all("#append-tail .tok", "s => s.map(x => Number(x.dataset.id))") == new[first:]

    # The constraint box: one bar per step, and a refused token stops the walk.
    page.select_option("#constraint-kind", "regex")
    page.fill("#constraint-spec", "[0-9]+")
    page.fill("#constraint-sample", "12x")
    page.wait_for_selector("#constraint-steps li.refused", timeout=30_000)
    assert page.locator("#constraint-steps li.step").count() == len(o200k.encode("12x"))
    page.fill("#constraint-spec", "(unclosed")
    page.wait_for_selector("#constraint-error:not([hidden])", timeout=30_000)
    assert "not a valid Python regex" in page.inner_text("#constraint-error.error")

    # Healing: "Visit https://exa" backs off to the prompt before "exa".
    page.fill("#text", "Visit https://exa")
    page.fill("#max-backoff", "2")
    page.wait_for_function(
        "() => document.getElementById('heal-summary').textContent.includes('bytes 65 78 61')", timeout=30_000
    )

    assert not errors, errors
    assert all(url.startswith(server.url) for url in requests), requests


def test_html_page_loads_nothing(browser_context: Any, toks: dict[str, tokstream.Tokenizer], tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args(["--html", str(out), "-t", NAMES[0], "-t", NAMES[1], TEXT])) == 0
    page = browser_context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    url = out.as_uri()
    page.goto(url)
    _wait_rendered(page, TEXT, NAMES)
    for name in NAMES:
        tok = toks[name]
        assert _span_ids(page, name) == tok.encode(TEXT)
        assert _stable_spans_before_marker(page, name) == tok.encode_stable(TEXT).stable_len
    assert page.locator("#input").is_hidden() and page.locator("#tools").is_hidden()
    page.hover('.panel[data-tokenizer="o200k_base"] .tok[data-index="0"]')
    page.wait_for_selector("#tooltip:not([hidden])")
    page.screenshot(path=str(tmp_path / "html.png"), full_page=True)
    assert not errors, errors
    assert requests == [url]
