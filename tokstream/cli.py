"""The ``tokstream`` command line: encode, decode, count, train and measure from a shell.

``tokstream encode``, ``tokstream decode`` and ``tokstream count`` wrap
``Tokenizer.encode``, ``Tokenizer.decode`` and ``len(encode(...))``; ``tokstream
train`` runs a trainer (``train_bpe``, ``train_wordpiece``, ``train_unigram``) over
files and saves a ``tokenizer.json``; ``tokstream stats`` prints ``metrics.stats`` for
one or more tokenizers side by side; ``tokstream view`` serves the token inspector page
(``tokstream.view``). ``python -m tokstream`` is the same program.
Every subcommand is one ``_run_*`` function plus one row of ``_COMMANDS``, so a new one
is two functions and a row.

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
- Progress goes to stderr, and only to a terminal unless ``--progress`` asks for it: a
  bar redrawn in place with ``\r`` (hand-written; no dependency), so stdout stays
  clean for pipes and logs stay free of control characters.

Not handled: reading huge inputs in pieces (the whole input is read into memory, as
``Tokenizer.encode`` needs it anyway), and output encodings that cannot represent the
decoded text (that is reported as an error).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

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
        _print_error(f"no command given; choose one of {', '.join(c.name for c in _COMMANDS)} (see '{_PROG} --help')")
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
    except (ValueError, TypeError, OSError, NotImplementedError) as e:
        # Every tokstream error is a ValueError whose message already says what to do;
        # NotImplementedError names an option a trainer or file format does not support.
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
        help="token ids, separated by spaces or commas, or a JSON list (default: read them from --file or stdin)",
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


_MODELS = ("bpe", "wordpiece", "unigram")
_DEFAULT_PATTERN = "o200k_base"


def _add_train_arguments(p: argparse.ArgumentParser) -> None:
    from .pre_tokenizers import PATTERNS

    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="UTF-8 training text ('-' for stdin); each file is one text",
    )
    p.add_argument("--model", "-m", choices=_MODELS, required=True, help="the model to train")
    p.add_argument(
        "--vocab-size",
        "-n",
        type=int,
        required=True,
        metavar="N",
        help="the number of ids, special tokens included",
    )
    p.add_argument(
        "--pattern",
        metavar="NAME|REGEX",
        help=f"bpe and wordpiece: the pre-tokenizer regex or a known name "
        f"({', '.join(PATTERNS)}; default: {_DEFAULT_PATTERN}); unigram splits words at "
        f"spaces",
    )
    p.add_argument(
        "--special-token",
        action="append",
        dest="special_tokens",
        metavar="TOKEN",
        help="add a special token (repeat for several; wordpiece's default is [UNK])",
    )
    p.add_argument(
        "--min-frequency",
        type=int,
        metavar="K",
        help="bpe and wordpiece: merge only pairs seen at least K times (default: 2)",
    )
    p.add_argument("--output", "-o", required=True, metavar="PATH", help="where to write the tokenizer.json")
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="bpe and unigram: also draw held-out bytes per token against vocabulary size along "
        "training (merges; pruning rounds) into PNG (needs --heldout and matplotlib: "
        "pip install 'tokstream[plot]')",
    )
    p.add_argument(
        "--heldout",
        action="append",
        metavar="FILE",
        help="with --plot: UTF-8 text kept out of training to measure compression on (repeatable)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="draw a progress bar on stderr (default: only when stderr is a terminal)",
    )


def _run_train(args: argparse.Namespace) -> int:
    if args.min_frequency is not None and args.model == "unigram":
        raise _UsageError("--min-frequency applies to bpe and wordpiece, not unigram")
    heldout: list[str] = []
    if args.plot is not None:
        if args.model == "wordpiece":
            raise _UsageError("--plot draws BPE merges or Unigram pruning rounds; wordpiece has no such curve")
        if not args.heldout:
            raise _UsageError("--plot needs --heldout FILE: text kept out of training to measure compression on")
        _check_writable(args.plot)
        heldout = [_read_text(None, path, "train")[0] for path in args.heldout]
    elif args.heldout:
        raise _UsageError("--heldout goes with --plot")
    _check_writable(args.output)
    trainer, count = _trainer(args.model, args.pattern, args.special_tokens or ())
    show = args.progress if args.progress is not None else _is_terminal(sys.stderr)
    # The map step file by file (each file's text is dropped once counted), then training.
    counts: Counter[str] = Counter()
    n_files = len(args.files)
    bar = _ProgressBar(sys.stderr, "counting") if show else None
    try:
        for k, path in enumerate(args.files):
            text, _ = _read_text(None, path, "train")
            counts.update(count(text))
            if bar is not None:
                bar(k + 1, n_files)
        if bar is not None:
            bar.finish()
            bar = _ProgressBar(sys.stderr, f"training {args.model}")
        options: dict[str, Any] = {"progress": bar}
        if args.pattern is not None or args.model != "unigram":
            options["pattern"] = args.pattern or _DEFAULT_PATTERN
        if args.special_tokens:
            options["special_tokens"] = args.special_tokens
        if args.min_frequency is not None:
            options["min_frequency"] = args.min_frequency
        curve: list[tuple[int, float]] = []
        if args.plot is not None and args.model == "unigram":
            from .train.curve import bytes_per_token

            options["snapshot"] = lambda t: curve.append((t.n_vocab, bytes_per_token(t, heldout)))
        started = time.perf_counter()
        tok = trainer(counts, args.vocab_size, **options)
        seconds = time.perf_counter() - started
    finally:
        if bar is not None:
            bar.finish()
    try:
        tok.save(args.output)
    except OSError as e:
        raise OSError(f"cannot write {args.output!r}: {e.strerror or e}") from None
    print(f"{args.output}: {args.model}, n_vocab={tok.n_vocab}, trained in {seconds:.1f} s")
    if args.plot is not None:
        from .plots import training_figure
        from .train.curve import bpe_curve, bytes_per_token

        if args.model == "bpe":
            curve = bpe_curve(tok, heldout)
        else:
            curve.append((tok.n_vocab, bytes_per_token(tok, heldout)))
        what = "merges" if args.model == "bpe" else "pruning rounds"
        training_figure(
            curve, args.plot, title=f"{args.model} along training ({what}), held out: {len(heldout)} file(s)"
        )
        print(f"{args.plot}: {len(curve)} points, held-out bytes/token {curve[-1][1]:.3f} at n_vocab={tok.n_vocab}")
    return 0


def _trainer(
    model: str, pattern: str | None, special_tokens: Sequence[str]
) -> tuple[Callable[..., Tokenizer], Callable[[str], Counter[str]]]:
    """``model``'s training function and the map step that counts one text for it,
    imported when the command runs (unigram may be absent from this installation)."""
    if model in ("bpe", "wordpiece"):
        from .train.bpe import train_bpe
        from .train.counting import count_pretokens
        from .train.wordpiece import train_wordpiece

        split = pattern or _DEFAULT_PATTERN
        train: Callable[..., Tokenizer] = train_bpe if model == "bpe" else train_wordpiece
        return train, lambda text: count_pretokens([text], split)
    try:
        unigram = importlib.import_module(f"{__package__}.train.unigram")
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.train.unigram":
            raise
        raise ValueError(
            "unigram training is not available in this version of tokstream "
            "(no tokstream.train.unigram); use --model bpe or --model wordpiece"
        ) from None
    count_words = unigram.count_words  # its words: "▁" + text, split before each space
    specials = list(special_tokens)
    train_unigram: Callable[..., Tokenizer] = unigram.train_unigram
    return train_unigram, lambda text: count_words([text], special_tokens=specials)


def _check_writable(path: str) -> None:
    """Fail before training, not after it, when ``path`` cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OSError(f"cannot write {path!r}: it is a directory")
    if not os.path.isdir(folder):
        raise OSError(f"cannot write {path!r}: no directory {folder!r}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise OSError(f"cannot write {path!r}: permission denied")


def _add_stats_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="UTF-8 text files ('-' for stdin; default: stdin); each file is one text",
    )
    p.add_argument(
        "--tokenizer",
        "-t",
        action="append",
        dest="tokenizers",
        metavar="NAME|PATH",
        help="a tokenizer name or file, as for encode; repeat to compare several side by side (default: default)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw tokens per byte and per word for each tokenizer and file as grouped bars "
        "into PNG (needs matplotlib: pip install 'tokstream[plot]')",
    )


#: ``metrics.stats`` keys and their row labels, in table order.
_STATS_ROWS = (
    ("texts", "texts"),
    ("tokens", "tokens"),
    ("words", "words"),
    ("chars", "characters"),
    ("bytes", "bytes"),
    ("tokens_per_word", "tokens/word"),
    ("tokens_per_char", "tokens/char"),
    ("tokens_per_byte", "tokens/byte"),
    ("bytes_per_token", "bytes/token"),
    ("chars_per_token", "chars/token"),
)


def _run_stats(args: argparse.Namespace) -> int:
    from .metrics import stats

    names: list[str] = args.tokenizers or ["default"]
    tokenizers = [_load(name) for name in names]  # an unknown name fails before any reading
    paths: list[str] = args.files or [_STDIN]
    if args.files:
        texts = [_read_text(None, path, "stats")[0] for path in paths]
    else:
        texts = [_read_text(None, None, "stats")[0]]  # stdin, with the terminal hint
    if args.plot is not None:
        _check_writable(args.plot)
    results = [stats(tok, texts) for tok in tokenizers]
    if args.plot is not None:
        from .plots import stats_figure

        shown = [_display(p) for p in paths]
        per_file = {
            name: {label: stats(tok, [text]) for label, text in zip(shown, texts)}
            for name, tok in zip(names, tokenizers)
        }
        stats_figure(per_file, args.plot)
    if args.json:
        out = {
            "files": [_display(p) for p in paths],
            "tokenizers": [{"tokenizer": name, **r} for name, r in zip(names, results)],
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    rows = [["", *names]]
    for key, label in _STATS_ROWS:
        rows.append([label, *(_format_stat(r[key]) for r in results)])
    print(_table(rows))
    return 0


def _format_stat(value: int | float | None) -> str:
    if value is None:
        return "-"  # the denominator was 0 (no words, no tokens)
    if isinstance(value, int):
        return str(value)
    return f"{value:.4f}"


def _table(rows: list[list[str]]) -> str:
    """Rows as text: the first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _add_demo_arguments(p: argparse.ArgumentParser) -> None:
    from .demo import SECTIONS

    _add_tokenizer_option(p)
    p.add_argument(
        "--section",
        type=int,
        choices=range(1, len(SECTIONS) + 1),
        metavar="N",
        help=f"run only section N (1-{len(SECTIONS)})",
    )


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(_load(args.tokenizer), sections=None if args.section is None else [args.section])
    return 0


def _add_view_arguments(p: argparse.ArgumentParser) -> None:
    from .view import add_arguments

    add_arguments(p)


def _run_view(args: argparse.Namespace) -> int:
    from .view import run

    return run(args)


#: One row per subcommand; `--help` lists them in this order.
_COMMANDS: tuple[_Command, ...] = (
    _Command("encode", "encode text to token ids", _add_encode_arguments, _run_encode),
    _Command("decode", "decode token ids to text", _add_decode_arguments, _run_decode),
    _Command("count", "count the tokens of a text or files", _add_count_arguments, _run_count),
    _Command("train", "train a tokenizer on text files", _add_train_arguments, _run_train),
    _Command(
        "stats",
        "print tokens per word, character and byte for tokenizers side by side",
        _add_stats_arguments,
        _run_stats,
    ),
    _Command(
        "demo",
        "show encoding, streaming, healing, cache keys and speculative decoding (offline)",
        _add_demo_arguments,
        _run_demo,
    ),
    _Command(
        "view",
        "show how tokenizers cut a text, in a local page (127.0.0.1 only) or one HTML file",
        _add_view_arguments,
        _run_view,
    ),
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
        p.add_argument("--file", metavar="PATH", help="read UTF-8 text from PATH ('-' for stdin)")


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
                f"{where}{field!r} is not a token id (expected integers separated by spaces or commas, or a JSON list)"
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
                f"no input; pass it as an argument, with --file PATH, or on stdin (echo 'Hello' | {_PROG} {command})"
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


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


class _ProgressBar:
    """``label [#######.......] done/total pct% elapsed`` on one line, redrawn in place.

    A trainer's ``progress(done, total)`` callback. Redraws at most ten times a second
    (the last call of a run always draws); ``finish`` ends the line. The line is padded
    to the previous one's length instead of using an ANSI erase, so any terminal works.
    """

    _WIDTH = 30
    _INTERVAL = 0.1

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream, self.label = stream, label
        self.started = time.monotonic()
        self.last_draw = float("-inf")
        self.last_len = 0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last_draw < self._INTERVAL:
            return
        self.last_draw = now
        fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 1.0
        filled = round(fraction * self._WIDTH)
        line = (
            f"{self.label} [{'#' * filled}{'.' * (self._WIDTH - filled)}] {done}/{total} "
            f"{fraction:4.0%} {now - self.started:.1f}s"
        )
        self.stream.write("\r" + line.ljust(self.last_len))
        self.stream.flush()
        self.last_len = len(line)
        self.drawn = True

    def finish(self) -> None:
        """End the bar's line (once; nothing if it never drew)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
