"""``tokstream view``'s server and JSON API, checked against the library called directly.

One server on a free loopback port (port 0: the suite runs under pytest-xdist) with
cl100k_base and o200k_base; every bad-input case gets its status and message, and a
good request right after it still gets its answer.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tokstream
from tokstream.view import add_arguments, api, run, start_server
from tokstream.view.server import MAX_BODY, ViewServer

NAMES = ("cl100k_base", "o200k_base")
TEXTS = [
    "Hello world, how are",
    "Visit https://exa",
    "naïve café 👋🏽 日本語のテキスト\n\n  indented\ttabs   ",
    "",
    " ",
    "x" * 500,
    "<|endoftext|> is plain text here",
    "def f(x):\n    return x ** 2  # comment\n",
]


@pytest.fixture(scope="module")
def toks() -> dict[str, tokstream.Tokenizer]:
    return {name: tokstream.load(name) for name in NAMES}


@pytest.fixture(scope="module")
def server(toks: dict[str, tokstream.Tokenizer]) -> Iterator[ViewServer]:
    srv = start_server(toks, port=0)
    yield srv
    srv.close()


def request(srv: ViewServer, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    if data is not None:
        headers.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(srv.url.rstrip("/") + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            status = r.status
            kind = r.headers.get_content_type()
    except urllib.error.HTTPError as e:
        raw, status, kind = e.read(), e.code, e.headers.get_content_type()
    return status, (json.loads(raw) if kind == "application/json" else raw.decode())


def post(srv: ViewServer, path: str, body: Any, **headers: str) -> tuple[int, Any]:
    return request(srv, "POST", path, body, **headers)


def assert_still_serving(srv: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    status, answer = post(srv, "/api/encode", {"text": "still here", "tokenizers": ["cl100k_base"]})
    assert status == 200
    assert answer["results"][0]["ids"] == toks["cl100k_base"].encode("still here")


# ------------------------------------------------------------------ good requests


def test_tokenizers_and_static_files(server: ViewServer) -> None:
    status, answer = request(server, "GET", "/api/tokenizers")
    assert status == 200
    assert answer == {"tokenizers": list(NAMES), "text": "", "max_chars": 100_000}
    status, page = request(server, "GET", "/")
    assert status == 200 and 'id="tooltip"' in page and "static/app.js" in page
    for name, needle in (("app.js", "/api/encode"), ("style.css", ".tok.unstable")):
        status, text = request(server, "GET", f"/static/{name}")
        assert status == 200 and needle in text
    status, answer = request(server, "GET", "/static/../api.py")
    assert status == 404 and "error" in answer


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_the_library(server: ViewServer, toks: dict[str, tokstream.Tokenizer], text: str) -> None:
    status, answer = post(server, "/api/encode", {"text": text, "tokenizers": list(NAMES)})
    assert status == 200
    assert answer["length"] == len(text)
    assert [r["tokenizer"] for r in answer["results"]] == list(NAMES)
    for result in answer["results"]:
        tok = toks[result["tokenizer"]]
        ids = tok.encode(text, disallowed_special=())
        if "<|" not in text:
            assert ids == tok.encode(text)
        assert result["ids"] == ids
        assert result["count"] == len(ids)
        assert result["boundary"] == tok.stable_boundary(text, disallowed_special=())
        assert result["stable_len"] == tok.encode_stable(text, disallowed_special=()).stable_len
        _, offsets = tok.encode_with_offsets(text, disallowed_special=())
        for record, token_id, (start, end) in zip(result["tokens"], ids, offsets, strict=True):
            assert record["id"] == token_id
            assert (record["text_start"], record["text_end"]) == (start, end)
            assert record["spelling"] == tok.id_to_token(token_id)
            assert bytes.fromhex(record["bytes_hex"]) == tok.token_bytes(token_id)
            assert record["text"] == tok.token_bytes(token_id).decode("utf-8", errors="replace")


def test_encode_special_tokens_on_request(server: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    text = "a<|endoftext|>b"
    status, answer = post(server, "/api/encode", {"text": text, "tokenizers": ["o200k_base"], "allow_special": True})
    assert status == 200
    assert answer["results"][0]["ids"] == toks["o200k_base"].encode(text, allowed_special="all")


@pytest.mark.parametrize(
    ("text", "suffix"),
    [("Hello wor", "ld"), ("Hello world, how are", " you?"), ("naïve 👋", "🏽 ok"), ("abc", ""), ("", "xyz")],
)
def test_append_matches_the_library(
    server: ViewServer, toks: dict[str, tokstream.Tokenizer], text: str, suffix: str
) -> None:
    for name, tok in toks.items():
        status, answer = post(server, "/api/append", {"text": text, "tokenizer": name, "suffix": suffix})
        assert status == 200
        old, new = tok.encode(text), tok.encode(text + suffix)
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        assert answer["ids"] == new
        assert answer["first_changed"] == first
        assert answer["stable_len"] == tok.encode_stable(text).stable_len <= first
        assert [r["id"] for r in answer["tail"]] == new[first:]
        assert [r["id"] for r in answer["replaced"]] == old[first:]
        offsets = tok.encode_with_offsets(text + suffix)[1][first:]
        assert [(r["text_start"], r["text_end"]) for r in answer["tail"]] == offsets


@pytest.mark.parametrize(("text", "max_backoff"), [("Visit https://exa", 2), ("The quick brown fo", 1), ("Done.", 0)])
def test_heal_matches_the_library(
    server: ViewServer, toks: dict[str, tokstream.Tokenizer], text: str, max_backoff: int
) -> None:
    for name, tok in toks.items():
        status, answer = post(server, "/api/heal", {"text": text, "tokenizer": name, "max_backoff": max_backoff})
        assert status == 200
        ids = tok.encode(text)
        healing = tokstream.heal(tok, ids, max_backoff=max_backoff)
        mask = tokstream.TokenMasker(tok).mask(healing.constraint())
        assert answer["kept"] == len(healing.prompt_ids)
        assert [r["id"] for r in answer["removed"]] == ids[len(healing.prompt_ids) :]
        assert bytes.fromhex(answer["prefix_hex"]) == healing.prefix
        assert answer["prefix_text"] == healing.prefix.decode("utf-8", errors="replace")
        assert answer["allowed"] == int(mask.sum()) == len(healing.constraint().allowed_ids())
        assert [r["id"] for r in answer["allowed_sample"]] == [int(i) for i in mask.nonzero()[0][: api.SAMPLE]]
    # The README's example: b"exa" allows 12 first tokens on cl100k_base.
    _, answer = post(server, "/api/heal", {"text": "Visit https://exa", "tokenizer": "cl100k_base", "max_backoff": 2})
    assert (answer["prefix_text"], answer["allowed"]) == ("exa", 12)


def _walk(tok: tokstream.Tokenizer, constraint: tokstream.Constraint[Any], sample: str) -> tuple[list[int], int | None]:
    """The allowed counts along ``sample``'s ids and the index of the first refused one."""
    masker = tokstream.TokenMasker(tok)
    counts = []
    for i, token_id in enumerate(tok.encode(sample)):
        counts.append(int(masker.mask(constraint).sum()))
        if not constraint.accept(token_id):
            return counts, i
    return counts, None


SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})


@pytest.mark.parametrize(
    ("kind", "spec", "sample", "build"),
    [
        (
            "regex",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}",
            "2024-12-02",
            lambda t: tokstream.regex_constraint(t, "[0-9]{4}-[0-9]{2}-[0-9]{2}"),
        ),
        ("regex", "[0-9]+", "12a4", lambda t: tokstream.regex_constraint(t, "[0-9]+")),
        ("prefix", "https://exa", "https://example.com", lambda t: tokstream.prefix_constraint(t, b"https://exa")),
        ("choice", "yes\r\nno\n\nmaybe", "maybe", lambda t: tokstream.choice_constraint(t, ["yes", "no", "maybe"])),
        ("json_schema", SCHEMA, '{"n": 42}', lambda t: tokstream.json_schema_constraint(t, SCHEMA)),
        ("json_schema", SCHEMA, '{"n": "x"}', lambda t: tokstream.json_schema_constraint(t, SCHEMA)),
    ],
)
def test_constraint_matches_the_library(
    server: ViewServer, toks: dict[str, tokstream.Tokenizer], kind: str, spec: str, sample: str, build: Any
) -> None:
    for name, tok in toks.items():
        status, answer = post(
            server, "/api/constraint", {"tokenizer": name, "kind": kind, "spec": spec, "sample": sample}
        )
        assert status == 200, answer
        constraint = build(tok)
        counts, refused = _walk(tok, constraint, sample)
        assert [s["allowed"] for s in answer["steps"]] == counts
        assert [s["token"]["id"] for s in answer["steps"]] == tok.encode(sample)[: len(counts)]
        assert answer["stopped_at"] == refused
        assert [s["accepted"] for s in answer["steps"]] == [i != refused for i in range(len(counts))]
        assert answer["can_end"] == constraint.can_end
        assert answer["n_vocab"] == tok.n_vocab
        if refused is None:
            assert answer["final_allowed"] == int(tokstream.TokenMasker(tok).mask(constraint).sum())
            assert "allowed" in answer["message"]
        else:
            assert answer["final_allowed"] is None
            assert f"token {refused} " in answer["message"] and "not allowed" in answer["message"]


# ------------------------------------------------------------------ bad requests


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        (
            "/api/encode",
            {"text": "x", "tokenizers": ["x"]},
            400,
            "unknown tokenizer 'x'; loaded: cl100k_base, o200k_base",
        ),
        (
            "/api/heal",
            {"text": "x", "tokenizer": "gpt2"},
            400,
            "unknown tokenizer 'gpt2'; loaded: cl100k_base, o200k_base",
        ),
        (
            "/api/encode",
            {"text": "x" * 100_001},
            413,
            "text of 100001 characters is over the limit of 100000 (--max-chars)",
        ),
        (
            "/api/append",
            {"text": "x" * 99_999, "suffix": "yy", "tokenizer": "o200k_base"},
            413,
            "text of 100001 characters is over the limit of 100000 (--max-chars)",
        ),
        ("/api/encode", b'{"text": "x"', 400, "the body is not JSON"),
        ("/api/encode", b"\xff\xfe", 400, "the body is not JSON"),
        ("/api/encode", b'["text"]', 400, "the body must be a JSON object"),
        ("/api/encode", {"text": 5}, 400, "field 'text' must be a string"),
        ("/api/encode", {}, 400, "missing field 'text'"),
        ("/api/encode", {"text": "x", "tokenizers": "cl100k_base"}, 400, "field 'tokenizers' must be a list"),
        ("/api/encode", {"text": "x", "tokenizers": [1]}, 400, "field 'tokenizers' must be a list of strings"),
        ("/api/encode", {"text": "x", "allow_special": 1}, 400, "field 'allow_special' must be true or false"),
        ("/api/append", {"text": "x", "tokenizer": "o200k_base"}, 400, "missing field 'suffix'"),
        (
            "/api/heal",
            {"text": "x", "tokenizer": "o200k_base", "max_backoff": True},
            400,
            "field 'max_backoff' must be an integer",
        ),
        (
            "/api/heal",
            {"text": "x", "tokenizer": "o200k_base", "max_backoff": -1},
            400,
            "field 'max_backoff' must be 0 or more",
        ),
        ("/api/heal", {"text": "x", "tokenizer": 3}, 400, "field 'tokenizer' must be a string"),
        ("/api/constraint", {"kind": "regex", "spec": "a", "sample": "a"}, 400, "missing field 'tokenizer'"),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "regex", "spec": "(ab", "sample": "ab"},
            400,
            "regex: not a valid Python regex: missing ), unterminated subpattern (at offset 0)",
        ),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "regex", "spec": "(?=a)a", "sample": "a"},
            400,
            "regex: the lookahead (?=...) is not regular",
        ),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "json_schema", "spec": "{", "sample": "{}"},
            400,
            "json_schema: the schema is not valid JSON",
        ),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "json_schema", "spec": '{"type": "strin"}', "sample": "{}"},
            400,
            "json_schema: the keyword 'type' at #: unknown type \"strin\"",
        ),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "choice", "spec": "\n\n", "sample": "a"},
            400,
            "choice: choice_constraint needs at least one option",
        ),
        (
            "/api/constraint",
            {"tokenizer": "o200k_base", "kind": "grammar", "spec": "x", "sample": "a"},
            400,
            "field 'kind' must be one of prefix, choice, regex, json_schema, not 'grammar'",
        ),
        ("/api/nothing", {"text": "x"}, 404, "no endpoint '/api/nothing'"),
    ],
)
def test_bad_requests(
    server: ViewServer, toks: dict[str, tokstream.Tokenizer], path: str, body: Any, status: int, message: str
) -> None:
    got_status, answer = post(server, path, body)
    assert got_status == status
    assert set(answer) == {"error"}
    assert answer["error"].startswith(message), answer["error"]
    assert_still_serving(server, toks)


def test_wrong_content_type_and_host(server: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    status, answer = post(server, "/api/encode", {"text": "x"}, **{"Content-Type": "text/plain"})
    assert (status, answer) == (415, {"error": "send the body as application/json, not text/plain"})
    # DNS rebinding: a page served under another name must not reach the API.
    status, answer = post(server, "/api/encode", {"text": "x"}, Host=f"evil.example:{server.port}")
    assert status == 421 and "is not this machine" in answer["error"]
    status, _ = request(server, "GET", "/", Host=f"localhost:{server.port}")
    assert status == 200
    assert_still_serving(server, toks)


def test_oversized_body_is_refused_unread(server: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    # Announce a body over the limit and send none of it: the answer must come at once.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(
            f"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {MAX_BODY + 1}\r\n\r\n".encode()
        )
        data = b""
        while chunk := s.recv(65536):  # the server closes the connection after answering
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ")
    assert b"Connection: close" in head
    assert json.loads(payload) == {"error": f"request body of {MAX_BODY + 1} bytes is over the limit of {MAX_BODY}"}
    assert_still_serving(server, toks)


def test_missing_content_length(server: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/api/encode")
    conn.putheader("Content-Type", "application/json")
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 411
    assert json.loads(response.read()) == {"error": "send the JSON body with a Content-Length"}
    conn.close()
    assert_still_serving(server, toks)


def test_an_internal_error_is_a_500_and_the_server_goes_on(
    server: ViewServer, toks: dict[str, tokstream.Tokenizer], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(tokenizers: Any, body: Any, max_chars: int) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setitem(api.ROUTES, "/api/heal", broken)
    status, answer = post(server, "/api/heal", {"text": "x", "tokenizer": "o200k_base"})
    assert (status, answer) == (500, {"error": "internal error in /api/heal: RuntimeError: boom"})
    assert_still_serving(server, toks)


def test_many_requests_at_once(server: ViewServer, toks: dict[str, tokstream.Tokenizer]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"request {i}: {'naïve 👋 ' * i}" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda t: post(server, "/api/encode", {"text": t}), texts))
    for text, (status, answer) in zip(texts, answers, strict=True):
        assert status == 200
        assert [r["ids"] for r in answer["results"]] == [toks[n].encode(text) for n in NAMES]


# ------------------------------------------------------------------ start-up errors


def test_port_in_use(toks: dict[str, tokstream.Tokenizer]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"^port {port} is in use: pass --port 0 for a free one$"):
            start_server(toks, port=port)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_only_loopback_hosts(toks: dict[str, tokstream.Tokenizer], host: str) -> None:
    with pytest.raises(ValueError, match="is not a loopback address"):
        start_server(toks, host=host)


def test_ipv6_loopback(toks: dict[str, tokstream.Tokenizer]) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        srv = start_server(toks, host="::1")
    except OSError as e:
        pytest.skip(f"cannot listen on ::1 here: {e}")
    try:
        assert srv.url == f"http://[::1]:{srv.port}/"
        status, answer = request(srv, "GET", "/api/tokenizers")
        assert status == 200 and answer["tokenizers"] == list(NAMES)
    finally:
        srv.close()


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tokstream view")
    add_arguments(parser)
    return parser.parse_args(argv)


def test_arguments_defaults() -> None:
    args = _parse([])
    assert (args.tokenizers, args.port, args.host, args.html, args.text, args.max_chars) == (
        None,
        8765,
        "127.0.0.1",
        None,
        None,
        100_000,
    )
    args = _parse(["-t", "cl100k_base", "--tokenizer", "o200k_base", "--port", "0", "hi"])
    assert (args.tokenizers, args.port, args.text) == (["cl100k_base", "o200k_base"], 0, "hi")


def test_run_errors(tmp_path: Path) -> None:
    with pytest.raises(tokstream.UnknownTokenizerError, match="unknown tokenizer 'nope'"):
        run(_parse(["-t", "nope", "--port", "0"]))
    with pytest.raises(ValueError, match=re.escape("--host '10.0.0.1' is not a loopback address")):
        run(_parse(["--host", "10.0.0.1"]))
    with pytest.raises(ValueError, match=re.escape("over the limit of 3 (--max-chars)")):
        run(_parse(["--html", str(tmp_path / "x.html"), "--max-chars", "3", "abcd"]))
    with pytest.raises(OSError, match="cannot write"):
        run(_parse(["--html", str(tmp_path / "no" / "x.html"), "abc"]))


# ------------------------------------------------------------------ --html


def html_data(page: str) -> dict[str, Any]:
    """The JSON blob of a ``--html`` page."""
    found = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert found is not None
    blob = found.group(1)
    assert "</" not in blob and "<!--" not in blob
    data: dict[str, Any] = json.loads(blob)
    return data


def test_html_page(tmp_path: Path, toks: dict[str, tokstream.Tokenizer], capsys: pytest.CaptureFixture[str]) -> None:
    text = "Hello </script><script>alert(1)</script> <!-- naïve 👋 \u2028 world, how are"
    out = tmp_path / "view.html"
    assert run(_parse(["--html", str(out), "-t", "cl100k_base", "-t", "o200k_base", "-t", "cl100k_base", text])) == 0
    assert capsys.readouterr().out == f"tokstream view: wrote {out}\n"
    page = out.read_text(encoding="utf-8")
    # Self-contained: no link, no external script, no URL at all in a src or href.
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<link" not in page and "<script src" not in page
    assert "http://" not in page and "https://" not in page
    assert page.count("<script") == 2 and "<style>" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    data = html_data(page)
    assert data["text"] == text
    assert [r["tokenizer"] for r in data["results"]] == ["cl100k_base", "o200k_base"]
    for result in data["results"]:
        tok = toks[result["tokenizer"]]
        assert result["ids"] == tok.encode(text)
        assert result["stable_len"] == tok.encode_stable(text).stable_len


def test_static_files_can_be_inlined() -> None:
    from tokstream.view.server import static_file

    for name in ("app.js", "style.css"):
        text = static_file(name)
        # "</" would end its inline block in --html pages; "<!--" and "<script" could
        # switch the HTML parser's script states.
        for needle in ("</", "<!--", "<script"):
            assert needle not in text, f"{name} holds {needle!r}, which --html pages cannot inline"
        assert "http://" not in text and "https://" not in text


# ------------------------------------------------------------------ the command's server


def test_run_serves_until_interrupted(view_command: Any) -> None:
    """The command itself: it prints its address, answers, and exits 0 on Ctrl-C."""
    with view_command("-t", "cl100k_base", "initial text") as url:
        with urllib.request.urlopen(url + "api/tokenizers", timeout=30) as r:
            assert json.loads(r.read()) == {"tokenizers": ["cl100k_base"], "text": "initial text", "max_chars": 100_000}
