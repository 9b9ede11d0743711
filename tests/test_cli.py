"""The ``tokstream`` command line, in-process through ``main([...])`` and once as a process.

Expected ids come from tiktoken, built offline from the fixture rank files in
``../shared/fixtures/tiktoken`` (the helper is local on purpose: this file must not depend
on conftest.py). Without the fixtures these tests skip, or fail when
``TOKSTREAM_REQUIRE_FIXTURES=1`` (CI sets it).
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from tokstream.cli import main

# ../shared/fixtures next to the repository; TOKSTREAM_FIXTURES overrides, as in conftest.py.
FIXTURES = Path(
    os.environ.get("TOKSTREAM_FIXTURES")
    or Path(__file__).resolve().parents[2] / "shared" / "fixtures"
)

TEXTS = [
    "Hello, world! 👋",
    "hello world",
    "  leading spaces, trailing\ttab\t",
    "line one\r\nline two\n\n",
    "吾輩は猫である。名前はまだ無い。",
    "naïve café — 1234567 résumé’s",
    "👨‍👩‍👧‍👦 e\u0301 \u200b",
]


# ------------------------------------------------------------------- reference


@functools.lru_cache(maxsize=None)
def _tiktoken(name: str) -> Any:
    """tiktoken's encoding ``name``, built from the local fixture file (no network)."""
    path = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    if not path.is_file():
        reason = f"fixture {path} is missing (tokstream's tests read ../shared/fixtures)"
        if os.environ.get("TOKSTREAM_REQUIRE_FIXTURES") == "1":
            pytest.fail(reason + "; TOKSTREAM_REQUIRE_FIXTURES=1 makes that an error")
        pytest.skip(reason)
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public  # type: ignore[import-untyped]

    def load_local(_url: str, expected_hash: str | None = None) -> Any:
        # Same hash check as tiktoken's download, on the local copy.
        return tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=expected_hash)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(openai_public, "load_tiktoken_bpe", load_local)
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


def _ref(name: str = "o200k_base") -> Any:
    return _tiktoken(name)


def _ids_line(ids: list[int]) -> str:
    return " ".join(map(str, ids)) + "\n"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    # A pipe, as the shell gives it: bytes underneath, not a terminal.
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code != 0
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("tokstream: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)


# ---------------------------------------------------------------------- encode


@pytest.mark.parametrize("text", TEXTS)
def test_encode_argument_default_tokenizer(capsys: pytest.CaptureFixture[str], text: str) -> None:
    code, out, err = _run(capsys, "encode", text)
    assert (code, err) == (0, "")
    assert out == _ids_line(_ref("o200k_base").encode(text))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base", "p50k_base"])
def test_encode_named_tokenizer(capsys: pytest.CaptureFixture[str], name: str) -> None:
    text = "Hello, world! 👋 tokenization"
    code, out, _ = _run(capsys, "encode", text, "--tokenizer", name)
    assert code == 0
    assert out == _ids_line(_ref(name).encode(text))


def test_encode_tokenizer_alias_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    text = "GPT-2 says hello"
    expected = _ids_line(_ref("r50k_base").encode(text))
    assert _run(capsys, "encode", text, "-t", "gpt2")[1] == expected
    path = FIXTURES / "tiktoken" / "r50k_base.tiktoken"
    assert _run(capsys, "encode", text, "--tokenizer", str(path))[1] == expected


def test_encode_file_is_exact(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # CRLF, a trailing newline and a BOM-free UTF-8 file: encoded byte for byte.
    text = "".join(TEXTS)
    path = tmp_path / "in.txt"
    path.write_bytes(text.encode("utf-8"))
    code, out, _ = _run(capsys, "encode", "--file", str(path))
    assert code == 0
    assert out == _ids_line(_ref().encode(text))


@pytest.mark.parametrize("argv", [["encode"], ["encode", "--file", "-"]])
def test_encode_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    text = "from stdin 👋\r\nsecond line\n"
    _set_stdin(monkeypatch, text.encode("utf-8"))
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    assert out == _ids_line(_ref().encode(text))


def test_encode_json(capsys: pytest.CaptureFixture[str]) -> None:
    text = "Hello, world! 👋"
    code, out, _ = _run(capsys, "encode", text, "--json")
    assert code == 0
    assert json.loads(out) == _ref().encode(text)


def test_encode_allowed_special(capsys: pytest.CaptureFixture[str]) -> None:
    text = "a <|endoftext|> b <|endofprompt|>"
    ref = _ref()
    _, out, _ = _run(capsys, "encode", text, "--allowed-special", "all")
    assert out == _ids_line(ref.encode(text, allowed_special="all"))
    # Only <|endoftext|> allowed: <|endofprompt|> is still disallowed, so it errors.
    code, out, err = _run(capsys, "encode", text, "--allowed-special", "<|endoftext|>")
    _assert_one_line_error(code, out, err, "<|endofprompt|>")
    one = "a <|endoftext|> b"
    _, out, _ = _run(capsys, "encode", one, "--allowed-special", "<|endoftext|>")
    assert out == _ids_line(ref.encode(one, allowed_special={"<|endoftext|>"}))
    _, out, _ = _run(capsys, "encode", text, "--allowed-special", "<|endoftext|>,<|endofprompt|>")
    assert out == _ids_line(ref.encode(text, allowed_special="all"))


def test_encode_ordinary(capsys: pytest.CaptureFixture[str]) -> None:
    text = "a <|endoftext|> b"
    code, out, _ = _run(capsys, "encode", text, "--ordinary", "-t", "cl100k_base")
    assert code == 0
    assert out == _ids_line(_ref("cl100k_base").encode_ordinary(text))


def test_encode_terminal_stdin_gives_hint(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

        def read(self, *args: Any) -> str:
            raise AssertionError("must not block reading a terminal")

    monkeypatch.setattr(sys, "stdin", Terminal())
    code, out, err = _run(capsys, "encode")
    _assert_one_line_error(code, out, err, "no input", "--file")
    assert code == 2


# ---------------------------------------------------------------------- decode


@pytest.mark.parametrize("text", TEXTS)
def test_decode_round_trip(capsys: pytest.CaptureFixture[str], text: str) -> None:
    ids = _ref().encode(text)
    code, out, _ = _run(capsys, "decode", *map(str, ids))
    assert code == 0
    assert out == text + "\n"
    _, out, _ = _run(capsys, "decode", *map(str, ids), "--json")
    assert json.loads(out) == {"text": _ref().decode(ids)}


@pytest.mark.parametrize(
    "fmt",
    [
        lambda ids: " ".join(map(str, ids)),
        lambda ids: ",".join(map(str, ids)),
        lambda ids: ", ".join(map(str, ids)) + ",\n",
        lambda ids: "\n".join(map(str, ids)) + "\n",
        json.dumps,
    ],
    ids=["spaces", "commas", "comma-space", "lines", "json"],
)
def test_decode_formats_from_file_and_stdin(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fmt: Any,
) -> None:
    text = "Hello, world! 👋 <|endoftext|>"
    ref = _ref("cl100k_base")
    ids = ref.encode(text, allowed_special="all")
    path = tmp_path / "ids.txt"
    path.write_text(fmt(ids), encoding="utf-8")
    code, out, _ = _run(capsys, "decode", "--file", str(path), "-t", "cl100k_base", "--json")
    assert code == 0
    assert json.loads(out) == {"text": ref.decode(ids)}
    _set_stdin(monkeypatch, fmt(ids).encode())
    code, out, _ = _run(capsys, "decode", "-t", "cl100k_base", "--json")
    assert code == 0
    assert json.loads(out) == {"text": ref.decode(ids)}


def test_decode_one_comma_separated_argument(capsys: pytest.CaptureFixture[str]) -> None:
    ids = _ref().encode("hello world")
    code, out, _ = _run(capsys, "decode", ",".join(map(str, ids)))
    assert (code, out) == (0, "hello world\n")


def test_decode_reads_encode_output(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "pipes compose 👋"
    for flag in ([], ["--json"]):
        _, encoded, _ = _run(capsys, "encode", text, *flag)
        _set_stdin(monkeypatch, encoded.encode())
        code, out, _ = _run(capsys, "decode", "--json")
        assert code == 0
        assert json.loads(out) == {"text": text}


def test_decode_empty(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _set_stdin(monkeypatch, b"")
    assert _run(capsys, "decode") == (0, "\n", "")


# ----------------------------------------------------------------------- count


def test_count_text(capsys: pytest.CaptureFixture[str]) -> None:
    text = "Hello, world! 👋"
    assert _run(capsys, "count", text) == (0, f"{len(_ref().encode(text))}\n", "")
    code, out, _ = _run(capsys, "count", text, "--json", "-t", "cl100k_base")
    assert code == 0
    assert json.loads(out) == {"count": len(_ref("cl100k_base").encode(text))}


def test_count_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "counted from stdin\n"
    _set_stdin(monkeypatch, text.encode())
    assert _run(capsys, "count") == (0, f"{len(_ref().encode(text))}\n", "")


def test_count_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ref = _ref()
    paths = []
    for i, text in enumerate(TEXTS[:3]):
        path = tmp_path / f"f{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    counts = [len(ref.encode(t)) for t in TEXTS[:3]]
    args = [a for p in paths for a in ("--file", str(p))]

    code, out, _ = _run(capsys, "count", "--file", str(paths[0]))
    assert (code, out) == (0, f"{counts[0]}\n")

    code, out, _ = _run(capsys, "count", *args)
    assert code == 0
    rows = [line.split(None, 1) for line in out.splitlines()]
    assert rows == [[str(n), str(p)] for n, p in zip(counts, paths)] + [
        [str(sum(counts)), "total"]
    ]

    code, out, _ = _run(capsys, "count", *args, "--json")
    assert code == 0
    assert json.loads(out) == {
        "files": [{"path": str(p), "count": n} for p, n in zip(paths, counts)],
        "count": sum(counts),
    }


def test_count_special_options(capsys: pytest.CaptureFixture[str]) -> None:
    text = "x <|endoftext|> y"
    ref = _ref()
    assert _run(capsys, "count", text, "--ordinary")[1] == f"{len(ref.encode_ordinary(text))}\n"
    expected = f"{len(ref.encode(text, allowed_special='all'))}\n"
    assert _run(capsys, "count", text, "--allowed-special", "all")[1] == expected


# ---------------------------------------------------------------------- errors


def test_error_unknown_tokenizer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "encode", "hi", "--tokenizer", "cl100k")
    _assert_one_line_error(code, out, err, "unknown tokenizer 'cl100k'", "cl100k_base")
    assert code == 1


def test_error_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    good = tmp_path / "good.txt"
    good.write_text("fine", encoding="utf-8")
    # The last: one readable file, then the missing one; no partial table is printed.
    for argv in (["encode"], ["decode"], ["count"], ["count", "--file", str(good)]):
        code, out, err = _run(capsys, *argv, "--file", str(missing))
        _assert_one_line_error(code, out, err, "cannot read", str(missing))
        assert code == 1


def test_error_directory_as_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(capsys, "encode", "--file", str(tmp_path))
    _assert_one_line_error(code, out, err, "cannot read", str(tmp_path))


def test_error_missing_tokenizer_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(capsys, "encode", "hi", "-t", str(tmp_path / "x.tiktoken"))
    _assert_one_line_error(code, out, err, "x.tiktoken")
    assert code == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["decode", "15339", "abc"], "'abc' is not a token id"),
        (["decode", "1.5"], "'1.5' is not a token id"),
        (["decode", "[1, true]"], "true is not a token id"),
        (["decode", "[1, 2"], "not a JSON list"),
    ],
)
def test_error_bad_id(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = _run(capsys, *argv)
    _assert_one_line_error(code, out, err, needle)
    assert code == 1


def test_error_bad_id_in_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("1 2 x3\n", encoding="utf-8")
    code, out, err = _run(capsys, "decode", "--file", str(path))
    _assert_one_line_error(code, out, err, str(path), "'x3'")


@pytest.mark.parametrize("bad", ["-1", "200019", "99999999999999999999"])
def test_error_out_of_range_id(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    code, out, err = _run(capsys, "decode", "1", bad)
    _assert_one_line_error(code, out, err, f"token id {bad} is out of range", "n_vocab=")
    assert code == 1


def test_error_out_of_range_id_gpt2(capsys: pytest.CaptureFixture[str]) -> None:
    n_vocab = _ref("r50k_base").n_vocab
    code, out, err = _run(capsys, "decode", str(n_vocab), "-t", "gpt2")
    _assert_one_line_error(code, out, err, f"token id {n_vocab} is out of range")


def test_error_disallowed_special(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "say <|endoftext|> here"
    code, out, err = _run(capsys, "encode", text)
    _assert_one_line_error(
        code, out, err, "'<|endoftext|>' at offset 4", "--allowed-special", "--ordinary"
    )
    assert code == 1
    path = tmp_path / "special.txt"
    path.write_text(text, encoding="utf-8")
    code, out, err = _run(capsys, "count", "--file", str(path))
    _assert_one_line_error(code, out, err, str(path), "<|endoftext|>")


def test_error_unknown_allowed_special(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "encode", "hi", "--allowed-special", "<|endoftxt|>")
    _assert_one_line_error(code, out, err, "'<|endoftxt|>'", "<|endoftext|>")


def test_error_invalid_utf8_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("café".encode("latin-1"))
    for command in ("encode", "count"):
        code, out, err = _run(capsys, command, "--file", str(path))
        _assert_one_line_error(code, out, err, str(path), "not valid UTF-8", "0xe9", "offset 3")
        assert code == 1


def test_error_invalid_utf8_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _set_stdin(monkeypatch, b"ok \xff")
    code, out, err = _run(capsys, "encode")
    _assert_one_line_error(code, out, err, "<stdin>", "not valid UTF-8")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["encode", "--bogus"],
        ["encode", "x", "--ordinary", "--allowed-special", "all"],
        ["encode", "x", "--file", "y"],
        ["decode", "1", "--file", "y"],
        ["count", "x", "--file", "y"],
        ["encode", "x", "--allowed-special", ","],
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = _run(capsys, *argv)
    _assert_one_line_error(code, out, err, "--help")
    assert code == 2


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--help")
    assert code == 0
    assert all(name in out for name in ("encode", "decode", "count"))
    code, out, _ = _run(capsys, "encode", "--help")
    assert code == 0 and "--allowed-special" in out
    code, out, _ = _run(capsys, "--version")
    assert (code, out.split()[0]) == (0, "tokstream")


def test_console_script_entry_point() -> None:
    (ep,) = entry_points(group="console_scripts", name="tokstream")
    assert ep.value == "tokstream.cli:main"


# ------------------------------------------------------------------ subprocess


def _python_m(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    # PYTHONIOENCODING pins stdout to UTF-8 whatever the CI machine's locale is.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "tokstream", *argv],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_python_m_tokstream() -> None:
    text = "Hello, world! 👋"
    ids = _ref().encode(text)
    done = _python_m("encode", text)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == _ids_line(ids)

    done = _python_m("decode", stdin=done.stdout)
    assert (done.returncode, done.stdout.decode()) == (0, text + "\n")

    done = _python_m("decode", "1", "nope")
    assert done.returncode == 1
    err = done.stderr.decode()
    assert err.startswith("tokstream: error: ") and err.count("\n") == 1
    assert "Traceback" not in err and "'nope'" in err
