"""The ``tokstream`` command line: encode, decode and count from a shell.

``tokstream encode``, ``tokstream decode`` and ``tokstream count`` wrap
``Tokenizer.encode``, ``Tokenizer.decode`` and ``len(encode(...))``; ``python -m
tokstream`` is the same program. Every subcommand is one ``_run_*`` function plus one
row of ``_COMMANDS``, so a new one (``demo``, ``train``, ``stats``) is two functions
and a row.

Conventions, chosen so pipes compose (``tokstream encode ... | tokstream decode``):

- Text from ``--file`` or stdin is read as bytes and decoded as strict UTF-8, so the
  exact text is encoded (no newline translation, no stripped trailing newline) and
  invalid UTF-8 is an error naming the file instead of silently becoming U+FFFD.
- Ids are printed space-separated on one line (a JSON list with ``--json``);
  ``decode`` reads ids separated by spaces, commas or newlines, or a JSON list.
- ``decode`` prints the text plus a newline, as ``echo`` does; ``--json`` gives the
  exact text.
- Errors are one line on stderr, ``tokstream: error: ...``, never a traceback. Exit
  status 2 is a usage error (bad options, no input), 1 a runtime error (unknown
  tokenizer, unreadable file, bad id, disallowed special token).

Not handled: reading huge inputs in pieces (the whole input is read into memory, as
``Tokenizer.encode`` needs it anyway), and output encodings that cannot represent the
decoded text (that is reported as an error).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from .errors import SpecialTokenError
from .specials import SpecialSet
from .tokenizer import Tokenizer

__all__ = ["main"]

_PROG = "tokstream"
_STDIN = "-"


class _UsageError(Exception):
    """Bad command-line input found after parsing (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line with the program's prefix.

    argparse prints the usage block and prefixes errors with the subcommand's prog
    (``tokstream encode: error:``); one ``tokstream: error:`` line that points to
    ``--help`` is easier to grep and to read in a CI log.
    """

    def error(self, message: str) -> NoReturn:
        """Print ``tokstream: error: <message>`` and exit with status 2."""
        _print_error(f"{message} (see '{self.prog} --help')")
        sys.exit(2)


@dataclass(frozen=True)
class _Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tokstream`` command line and return its exit status.

    ``argv`` excludes the program name; ``None`` means ``sys.argv[1:]``. Output goes
    to ``sys.stdout``; errors are one ``tokstream: error: ...`` line on ``sys.stderr``
    with status 2 (usage) or 1 (runtime), never a traceback.

    >>> main(["encode", "hello world", "--tokenizer", "cl100k_base"])
    15339 1917
    0
    >>> main(["decode", "15339,1917", "--tokenizer", "cl100k_base"])
    hello world
    0
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        # --help, --version and usage errors; a library caller wants a status, not an exit.
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:
        _print_error(
            f"no command given; choose one of {', '.join(c.name for c in _COMMANDS)} "
            f"(see '{_PROG} --help')"
        )
        return 2
    command: _Command = args.handler
    try:
        return command.run(args)
    except _UsageError as e:
        _print_error(f"{e} (see '{_PROG} {command.name} --help')")
        return 2
    except BrokenPipeError:
        # `tokstream encode ... | head` closed the pipe: not an error worth a message.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except KeyboardInterrupt:
        return 130
    except (ValueError, TypeError, OSError) as e:
        # Every tokstream error is a ValueError whose message already says what to do.
        _print_error(str(e))
        return 1


# ----------------------------------------------------------------- subcommands


def _add_encode_arguments(p: argparse.ArgumentParser) -> None:
    _add_text_source(p, many_files=False)
    _add_tokenizer_option(p)
    _add_special_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON list of ids")


def _run_encode(args: argparse.Namespace) -> int:
    text, source = _read_text(args.text, args.file, "encode")
    tok = _load(args.tokenizer)
    ids = _encode(tok, text, source, args)
    print(json.dumps(ids) if args.json else " ".join(map(str, ids)))
    return 0


def _add_decode_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "ids",
        nargs="*",
        metavar="ID",
        help="token ids, separated by spaces or commas, or a JSON list "
        "(default: read them from --file or stdin)",
    )
    p.add_argument(
        "--file",
        metavar="PATH",
        help="read the ids from PATH ('-' for stdin)",
    )
    _add_tokenizer_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"text": ...} (exact text; without it a newline is added)',
    )


def _run_decode(args: argparse.Namespace) -> int:
    if args.ids and args.file is not None:
        raise _UsageError("give ids as arguments or --file, not both")
    if args.ids:
        ids = _parse_ids(" ".join(args.ids), None)
    else:
        data, source = _read_text(None, args.file, "decode")
        ids = _parse_ids(data, source)
    tok = _load(args.tokenizer)
    text = tok.decode(ids)
    print(json.dumps({"text": text}, ensure_ascii=False) if args.json else text)
    return 0


def _add_count_arguments(p: argparse.ArgumentParser) -> None:
    _add_text_source(p, many_files=True)
    _add_tokenizer_option(p)
    _add_special_options(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"count": N}, plus "files": [{"path": ..., "count": ...}] with --file',
    )


def _run_count(args: argparse.Namespace) -> int:
    paths: list[str] = args.file or []
    if args.text is not None and paths:
        raise _UsageError("give TEXT or --file, not both")
    tok = _load(args.tokenizer)
    if not paths:
        text, source = _read_text(args.text, None, "count")
        n = len(_encode(tok, text, source, args))
        print(json.dumps({"count": n}) if args.json else n)
        return 0
    # Read and count every file before printing, so an error leaves no partial table.
    counts = [(path, len(_encode(tok, *_read_text(None, path, "count"), args))) for path in paths]
    total = sum(n for _, n in counts)
    if args.json:
        files = [{"path": path, "count": n} for path, n in counts]
        print(json.dumps({"files": files, "count": total}, ensure_ascii=False))
    elif len(counts) == 1:
        print(total)
    else:
        # wc's layout: the number first, so `sort -n` works; the total last.
        width = len(str(total))
        for path, n in counts:
            print(f"{n:>{width}} {_display(path)}")
        print(f"{total:>{width}} total")
    return 0


#: One row per subcommand; `--help` lists them in this order.
_COMMANDS: tuple[_Command, ...] = (
    _Command("encode", "encode text to token ids", _add_encode_arguments, _run_encode),
    _Command("decode", "decode token ids to text", _add_decode_arguments, _run_decode),
    _Command("count", "count the tokens of a text or files", _add_count_arguments, _run_count),
)


# --------------------------------------------------------------------- helpers


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog=_PROG,
        description="Exact, fast LLM tokenization (tiktoken-compatible encodings, embedded).",
        epilog=f"Run '{_PROG} COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in _COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help + ".")
        command.add_arguments(p)
        p.set_defaults(handler=command)
    return parser


def _add_text_source(p: argparse.ArgumentParser, *, many_files: bool) -> None:
    p.add_argument(
        "text",
        nargs="?",
        metavar="TEXT",
        help="the text (default: read it from --file or stdin)",
    )
    if many_files:
        p.add_argument(
            "--file",
            action="append",
            metavar="PATH",
            help="read UTF-8 text from PATH ('-' for stdin); repeat to count several files",
        )
    else:
        p.add_argument(
            "--file", metavar="PATH", help="read UTF-8 text from PATH ('-' for stdin)"
        )


def _add_tokenizer_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tokenizer",
        "-t",
        default="default",
        metavar="NAME|PATH",
        help="an embedded encoding (default, cl100k_base, o200k_base, r50k_base/gpt2, "
        "p50k_base) or a tokenizer file (default: %(default)s)",
    )


def _add_special_options(p: argparse.ArgumentParser) -> None:
    # The two answers to a special token's literal in the text, as in SpecialTokenError.
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--allowed-special",
        metavar="all|TOKEN,...",
        help="encode these special tokens' literals as the special token ids",
    )
    group.add_argument(
        "--ordinary",
        action="store_true",
        help="encode special tokens' literals as plain text",
    )


def _load(name_or_path: str) -> Tokenizer:
    from . import load

    return load(name_or_path)


def _encode(tok: Tokenizer, text: str, source: str | None, args: argparse.Namespace) -> list[int]:
    if args.ordinary:
        return tok.encode_ordinary(text)
    allowed: SpecialSet = frozenset()
    if args.allowed_special is not None:
        allowed = _parse_allowed_special(tok, args.allowed_special)
    try:
        return tok.encode(text, allowed_special=allowed)
    except SpecialTokenError as e:
        # The library's message names Python arguments; name the CLI's options instead.
        where = f"{_display(source)}: " if source is not None else ""
        raise ValueError(
            f"{where}text contains the special token {e.token!r} at offset {e.offset}; "
            f"pass --allowed-special {shlex.quote(e.token)} to encode it as that token, "
            f"or --ordinary to encode it as plain text"
        ) from None


def _parse_allowed_special(tok: Tokenizer, value: str) -> SpecialSet:
    if value == "all":
        return "all"
    wanted = frozenset(t for t in (s.strip() for s in value.split(",")) if t)
    if not wanted:
        raise _UsageError("--allowed-special needs 'all' or special token literals")
    # The library ignores names it does not know (as tiktoken); on a command line that is
    # almost always a typo, which would otherwise surface as a confusing second error.
    unknown = sorted(wanted - tok.special_tokens.keys())
    if unknown:
        raise ValueError(
            f"{tok.name!r} has no special token {unknown[0]!r}; "
            f"its special tokens: {', '.join(tok.special_tokens) or '(none)'}"
        )
    return wanted


_ID = re.compile(r"[+-]?[0-9]+")
_ID_SEPARATORS = re.compile(r"[\s,]+")


def _parse_ids(data: str, source: str | None) -> list[int]:
    """Ids from ``1 2 3``, ``1,2,3``, one per line, or a JSON list ``[1, 2, 3]``."""
    where = f"{_display(source)}: " if source is not None else ""
    stripped = data.strip()
    if stripped.startswith("["):
        try:
            values = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}not a JSON list of token ids ({e})") from None
        if not isinstance(values, list):
            raise ValueError(f"{where}expected a JSON list of token ids")
        for v in values:
            # bool is an int subclass; `true` is not a token id.
            if not isinstance(v, int) or isinstance(v, bool):
                raise ValueError(f"{where}{json.dumps(v)} is not a token id (expected integers)")
        return values
    ids: list[int] = []
    for field in _ID_SEPARATORS.split(stripped):
        if not field:
            continue
        # int() would also take "1_000" and non-ASCII digits; a token id is plain digits.
        if _ID.fullmatch(field) is None:
            raise ValueError(
                f"{where}{field!r} is not a token id (expected integers separated by "
                f"spaces or commas, or a JSON list)"
            )
        ids.append(int(field))
    return ids


def _read_text(text: str | None, path: str | None, command: str) -> tuple[str, str | None]:
    """The input text and where it came from (``None`` for a command-line argument)."""
    if text is not None and path is not None:
        raise _UsageError("give TEXT or --file, not both")
    if text is not None:
        return text, None
    if path is None or path == _STDIN:
        stdin = sys.stdin
        if path is None and (stdin is None or stdin.isatty()):
            # Waiting for a terminal user to type text and press Ctrl-D looks like a hang.
            raise _UsageError(
                f"no input; pass it as an argument, with --file PATH, or on stdin "
                f"(echo 'Hello' | {_PROG} {command})"
            )
        raw = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        return _decode_utf8(raw, _STDIN), _STDIN
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        # "[Errno 2] No such file or directory: 'x'" leads with noise; lead with the file.
        raise OSError(f"cannot read {path!r}: {e.strerror or e}") from None
    return _decode_utf8(raw, path), path


def _decode_utf8(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{_display(source)}: not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset "
            f"{e.start}); convert it first, e.g. with iconv"
        ) from None


def _display(source: str | None) -> str:
    return "<stdin>" if source == _STDIN else str(source)


def _print_error(message: str) -> None:
    # One line, whatever the message holds, so logs and `2>&1 | tail -1` stay readable.
    one_line = " ".join(message.split())
    print(f"{_PROG}: error: {one_line}", file=sys.stderr)
