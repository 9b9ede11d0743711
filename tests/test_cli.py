"""The ``tokstream`` command line, in-process through ``main([...])`` and once as a process.

Expected ids come from tiktoken, built offline from the fixture rank files in
``../shared/fixtures/tiktoken`` (``helpers.tiktoken_reference``; this file uses the plain
helpers only, no conftest.py fixture). Without the fixtures these tests skip, or fail when
``TOKSTREAM_REQUIRE_FIXTURES=1`` (CI sets it).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_file, fixture_text, tiktoken_reference

from tokstream.cli import main

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


def _ref(name: str = "o200k_base") -> Any:
    return tiktoken_reference(name)


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
    path = fixture_file("tiktoken/r50k_base.tiktoken")
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
def test_encode_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
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


def test_encode_terminal_stdin_gives_hint(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert rows == [[str(n), str(p)] for n, p in zip(counts, paths)] + [[str(sum(counts)), "total"]]

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
    _assert_one_line_error(code, out, err, "'<|endoftext|>' at offset 4", "--allowed-special", "--ordinary")
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


def test_error_invalid_utf8_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
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


# ----------------------------------------------------------------------- train


def _corpus_files(tmp_path: Path) -> list[Path]:
    """Two training files: botchan's first 40,000 characters, split in two."""
    text = fixture_text("corpora/corpus_botchan_en.txt")[:40_000]
    paths = []
    for i, part in enumerate((text[:25_000], text[25_000:])):
        path = tmp_path / f"train{i}.txt"
        path.write_bytes(part.encode("utf-8"))
        paths.append(path)
    return paths


def _require_corpus() -> None:
    _ref("o200k_base")  # skips (or fails in CI) without the fixtures, as the others


def test_train_wordpiece_saves_a_tokenizer_tokenizers_loads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _require_corpus()
    files = _corpus_files(tmp_path)
    out = tmp_path / "wp.json"
    code, stdout, err = _run(
        capsys, "train", "--model", "wordpiece", "--vocab-size", "600", "-o", str(out), *map(str, files)
    )
    assert (code, err) == (0, "")
    assert stdout.startswith(f"{out}: wordpiece, n_vocab=600")
    import tokstream
    from tokstream.train.wordpiece import train_wordpiece

    texts = [p.read_text("utf-8") for p in files]
    tok = tokstream.load(out)
    # The same as the library on the same texts (the CLI sums per-file counts).
    assert tok.fingerprint == train_wordpiece(texts, 600).fingerprint
    held = fixture_text("corpora/corpus_alice_in_wonderland_en.txt")[:20_000]
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(out))
    assert tok.encode(held) == ref.encode(held, add_special_tokens=False).ids
    assert tok.decode(tok.encode(texts[0])) == texts[0]


def test_train_bpe_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _require_corpus()
    files = _corpus_files(tmp_path)
    out = tmp_path / "bpe.json"
    code, _, err = _run(
        capsys,
        "train",
        "-m",
        "bpe",
        "-n",
        "400",
        "--pattern",
        "gpt2",
        "--special-token",
        "<|end|>",
        "--min-frequency",
        "3",
        "-o",
        str(out),
        *map(str, files),
    )
    assert (code, err) == (0, "")
    import tokstream
    from tokstream.train.bpe import train_bpe

    texts = [p.read_text("utf-8") for p in files]
    want = train_bpe(texts, 400, pattern="gpt2", special_tokens=["<|end|>"], min_frequency=3)
    tok = tokstream.load(out)
    assert tok.special_tokens == want.special_tokens == {"<|end|>": 399}
    assert tok.encode(texts[1]) == want.encode(texts[1])


def test_train_unigram_when_available(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("tokstream.train.unigram")
    _require_corpus()
    files = _corpus_files(tmp_path)
    out = tmp_path / "unigram.json"
    argv = ["train", "-m", "unigram", "-n", "500", "-o", str(out)]
    code, stdout, err = _run(capsys, *argv, *map(str, files))
    assert (code, err) == (0, ""), err
    assert "unigram, n_vocab=500" in stdout
    import tokstream

    tok = tokstream.load(out)
    text = files[1].read_text("utf-8")
    assert tok.decode(tok.encode(text)) == text
    # Unigram splits words at spaces: a regex pattern is refused in one line.
    code, stdout, err = _run(capsys, *argv, "--pattern", "gpt2", str(files[0]))
    _assert_one_line_error(code, stdout, err, "pattern")
    code, stdout, err = _run(capsys, *argv, "--min-frequency", "2", str(files[0]))
    _assert_one_line_error(code, stdout, err, "--min-frequency")
    assert code == 2


def test_train_unigram_missing_module(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Before train/unigram.py exists the other models work and unigram says so.
    monkeypatch.setitem(sys.modules, "tokstream.train.unigram", None)
    path = tmp_path / "t.txt"
    path.write_text("some text some text", encoding="utf-8")
    code, out, err = _run(capsys, "train", "-m", "unigram", "-n", "50", "-o", str(tmp_path / "u"), str(path))
    _assert_one_line_error(code, out, err, "unigram training is not available", "--model bpe")
    assert code == 1
    code, _, err = _run(capsys, "train", "-m", "wordpiece", "-n", "30", "-o", str(tmp_path / "w"), str(path))
    assert (code, err) == (0, "")


def test_train_progress_bar(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _require_corpus()
    files = list(map(str, _corpus_files(tmp_path)))
    out = str(tmp_path / "wp.json")
    code, _, err = _run(capsys, "train", "-m", "wordpiece", "-n", "500", "-o", out, "--progress", *files)
    assert code == 0
    lines = err.split("\n")
    assert lines[-1] == "" and len(lines) == 3, err  # counting, then training; each ends its line
    assert lines[0].startswith("\rcounting [") and lines[0].rstrip().split("\r")[-1].startswith(
        "counting [##############################] 2/2 100%"
    )
    final = lines[1].split("\r")[-1]
    assert final.startswith("training wordpiece [##############################]") and " 100% " in final
    assert "Traceback" not in err
    # Not a terminal: no bar unless asked for; --no-progress on a terminal: none either.
    assert _run(capsys, "train", "-m", "wordpiece", "-n", "500", "-o", out, *files)[2] == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["train", "-m", "wordpiece", "-n", "500", "-o", out, *files]) == 0
    assert "training wordpiece [" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    assert main(["train", "-m", "wordpiece", "-n", "500", "-o", out, "--no-progress", *files]) == 0
    assert terminal.getvalue() == ""


def test_train_unreadable_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("fine text fine text", encoding="utf-8")
    bad_utf8 = tmp_path / "latin1.txt"
    bad_utf8.write_bytes("café".encode("latin-1"))
    out = tmp_path / "out.json"
    missing = tmp_path / "missing.txt"
    for bad, needle in ((missing, "cannot read"), (tmp_path, "cannot read"), (bad_utf8, "not valid UTF-8")):
        argv = ["train", "-m", "bpe", "-n", "300", "-o", str(out), "--progress", str(good), str(bad)]
        code, stdout, err = _run(capsys, *argv)
        # The counting bar's line is ended before the error line.
        err_line = err.split("\n")[-2]
        assert code == 1 and stdout == "" and "Traceback" not in err
        assert err_line.startswith("tokstream: error: ") and str(bad) in err_line and needle in err_line
        assert not out.exists()


def test_train_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("abc abc", encoding="utf-8")
    out = str(tmp_path / "o.json")
    code, stdout, err = _run(capsys, "train", "-m", "wordpiece", "-n", "3", "-o", out, str(path))
    _assert_one_line_error(code, stdout, err, "vocab_size=3 is too small")
    assert code == 1
    nowhere = str(tmp_path / "no" / "o.json")
    code, stdout, err = _run(capsys, "train", "-m", "bpe", "-n", "300", "-o", nowhere, str(path))
    _assert_one_line_error(code, stdout, err, "cannot write", "no directory")
    code, stdout, err = _run(capsys, "train", "-m", "bpe", "-n", "300", "-o", str(tmp_path), str(path))
    _assert_one_line_error(code, stdout, err, "cannot write", "directory")
    argv = ["train", "-m", "bpe", "-n", "300", "--pattern", "(", "-o", out, str(path)]
    code, stdout, err = _run(capsys, *argv)
    _assert_one_line_error(code, stdout, err, "pattern does not compile")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    code, stdout, err = _run(capsys, "train", "-m", "wordpiece", "-n", "300", "-o", out, str(empty))
    _assert_one_line_error(code, stdout, err, "empty")


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "x.txt", "-n", "300", "-o", "o.json"],
        ["train", "x.txt", "-m", "bpe", "-o", "o.json"],
        ["train", "x.txt", "-m", "bpe", "-n", "300"],
        ["train", "x.txt", "-m", "sentencepiece", "-n", "300", "-o", "o.json"],
        ["train", "-m", "bpe", "-n", "300", "-o", "o.json"],
        ["train", "x.txt", "-m", "bpe", "-n", "many", "-o", "o.json"],
        ["stats", "--bogus"],
    ],
)
def test_train_and_stats_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = _run(capsys, *argv)
    _assert_one_line_error(code, out, err, "--help")
    assert code == 2


# ----------------------------------------------------------------------- stats


def _stats_table(out: str) -> dict[str, list[str]]:
    header, *rows = out.splitlines()
    return {"": header.split(), **{row.split()[0]: row.split()[1:] for row in rows}}


def test_stats_side_by_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    texts = [TEXTS[0] + " " + TEXTS[4], TEXTS[5]]
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"s{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(str(path))
    code, out, err = _run(capsys, "stats", "-t", "cl100k_base", "-t", "o200k_base", *paths)
    assert (code, err) == (0, "")
    table = _stats_table(out)
    assert table[""] == ["cl100k_base", "o200k_base"]
    tokens = [sum(len(_ref(name).encode(t)) for t in texts) for name in ("cl100k_base", "o200k_base")]
    words = sum(len(t.split()) for t in texts)
    chars = sum(len(t) for t in texts)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    assert table["texts"] == ["2", "2"]
    assert table["tokens"] == [str(n) for n in tokens]
    assert table["words"] == [str(words)] * 2
    assert table["characters"] == [str(chars)] * 2
    assert table["bytes"] == [str(n_bytes)] * 2
    assert table["tokens/word"] == [f"{n / words:.4f}" for n in tokens]
    assert table["tokens/char"] == [f"{n / chars:.4f}" for n in tokens]
    assert table["tokens/byte"] == [f"{n / n_bytes:.4f}" for n in tokens]
    assert table["bytes/token"] == [f"{n_bytes / n:.4f}" for n in tokens]
    assert table["chars/token"] == [f"{chars / n:.4f}" for n in tokens]

    code, out, _ = _run(capsys, "stats", "-t", "cl100k_base", "--json", *paths)
    assert code == 0
    data = json.loads(out)
    assert data["files"] == paths
    (row,) = data["tokenizers"]
    assert row["tokenizer"] == "cl100k_base" and row["tokens"] == tokens[0]
    assert row["tokens_per_word"] == tokens[0] / words


def test_stats_default_tokenizer_stdin_and_trained_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = "hello world, hello stats\n"
    _set_stdin(monkeypatch, text.encode())
    code, out, _ = _run(capsys, "stats")
    assert code == 0
    table = _stats_table(out)
    assert table[""] == ["default"] and table["tokens"] == [str(len(_ref().encode(text)))]
    # A special token's literal counts as plain text; an empty file has no ratios.
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    code, out, _ = _run(capsys, "stats", str(empty))
    assert code == 0 and _stats_table(out)["tokens/word"] == ["-"]
    special = tmp_path / "special.txt"
    special.write_text("<|endoftext|>", encoding="utf-8")
    code, out, _ = _run(capsys, "stats", str(special))
    assert _stats_table(out)["tokens"] == [str(len(_ref().encode_ordinary("<|endoftext|>")))]
    # A trained tokenizer file next to a named encoding.
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 20, encoding="utf-8")
    wp = tmp_path / "wp.json"
    assert _run(capsys, "train", "-m", "wordpiece", "-n", "40", "-o", str(wp), str(corpus))[0] == 0
    code, out, _ = _run(capsys, "stats", "-t", str(wp), "-t", "gpt2", str(corpus))
    assert code == 0 and _stats_table(out)[""] == [str(wp), "gpt2"]


def test_stats_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("fine", encoding="utf-8")
    missing = tmp_path / "missing.txt"
    code, out, err = _run(capsys, "stats", str(good), str(missing))
    _assert_one_line_error(code, out, err, "cannot read", str(missing))
    assert code == 1
    code, out, err = _run(capsys, "stats", "-t", "cl100k", str(good))
    _assert_one_line_error(code, out, err, "unknown tokenizer 'cl100k'")
    assert code == 1


def test_help_lists_train_and_stats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--help")
    assert code == 0 and "train" in out and "stats" in out
    code, out, _ = _run(capsys, "train", "--help")
    assert code == 0 and all(o in out for o in ("--model", "--vocab-size", "--pattern", "--output"))
    code, out, _ = _run(capsys, "stats", "--help")
    assert code == 0 and "--tokenizer" in out
