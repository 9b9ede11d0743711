"""Plain helpers shared by the test files: where the repository and the fixture files
are, the fixture tokenizers and references built from them, and how a test reports
a mismatch.

pytest fixtures and the hypothesis profile stay in ``conftest.py``; this module holds
plain functions and constants. Any test file imports it as ``from helpers import ...``:
under pytest's default "prepend" import mode, with no ``__init__.py`` in the test
folders, loading ``tests/conftest.py`` (and any test file directly in ``tests/``) puts
``tests/`` on ``sys.path``, which is also how ``strategies`` and ``protowire`` import.
So do not add a ``conftest.py`` or ``helpers.py`` to a test sub-folder (it would take
the module name and break these imports), and keep test file names unique across
folders.

Fixture files (rank files, tokenizer files, corpora, test vectors, the JSON Schema
Test Suite) are vendored in ``tests/data`` (its README lists each file's source and
licence), the large ones xz-compressed: ``fixture_file`` unpacks those once into a
cache folder under the system's temp dir, and checks every vendored file against
``tests/data/SHA256SUMS`` (the upstream sums). The rank files are the package's
embedded copies. A fixture that may not be redistributed (the JSONSchemaBench sample)
is looked up in ``../shared/fixtures`` from the repository root, or in
``$TOKSTREAM_FIXTURES``. A test that needs a missing file skips with the reason, never
passes; with ``TOKSTREAM_REQUIRE_FIXTURES=1`` (CI) it fails instead.

The package's source is read with ``ast`` (``package_modules``, ``module_imports``) by
the tests of its structure, ``test_imports.py`` and ``test_layers.py``.

Mismatches (STYLE.md, Tests): a differential test reports the first differing index
and the items around it, with ``assert_sequences_equal`` (or ``describe_difference``
where the test raises on its own).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import importlib.util
import json
import lzma
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple
from unittest import mock

import pytest
from strategies import replace_surrogates

import tokstream

# ----------------------------------------------------------------------- paths

#: The repository root (``tests/helpers.py`` -> ``tests`` -> the root).
REPO = Path(__file__).resolve().parents[1]


def _fixtures_root() -> Path:
    override = os.environ.get("TOKSTREAM_FIXTURES")
    if override:
        return Path(override)
    # the repository root's parent holds shared/fixtures
    return REPO.parent / "shared" / "fixtures"


#: The fixtures vendored in the repository (``tests/data/README.md``).
DATA = REPO / "tests" / "data"
#: Where the fixtures that are not vendored are (may not exist: tests then skip).
FIXTURES = _fixtures_root()
#: Where compressed vendored fixtures are unpacked (one folder per sum, so an edited
#: file never meets a stale copy; shared by the pytest-xdist workers and later runs).
UNPACKED = Path(tempfile.gettempdir()) / "tokstream-test-fixtures"

ENCODING_NAMES = ("cl100k_base", "o200k_base", "r50k_base", "p50k_base")
#: The corpora in fixtures/corpora.
CORPORA = (
    "corpus_alice_in_wonderland_en.txt",
    "corpus_botchan_en.txt",
    "corpus_us_constitution_en.txt",
    "corpus_wagahaiwa_nekodearu_ja.txt",
    "shakespeare_gutenberg_modern.txt",
)
#: The tokenizer.json fixtures, in fixtures/hf.
HF_FILES = (
    "gpt2_tokenizer.json",
    "llama3_tokenizer.json",
    "mistral_7b_v1_tokenizer.json",
    "bert_minilm_tokenizer.json",
    "botchan_unigram_1000_tokenizer.json",
)


def missing_fixture(reason: str) -> None:
    """Skip for a missing fixture; in CI (TOKSTREAM_REQUIRE_FIXTURES=1) fail instead."""
    if os.environ.get("TOKSTREAM_REQUIRE_FIXTURES") == "1":
        pytest.fail(f"{reason}; CI requires the fixtures", pytrace=False)
    pytest.skip(reason)


@functools.cache
def vendored_sums() -> dict[str, str]:
    """``tests/data/SHA256SUMS``: relative path -> sha256 of the original file."""
    sums = {}
    for line in (DATA / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        sums[rel] = digest
    return sums


def _stored(relpath: str) -> Path | None:
    """Where a vendored fixture is stored in the repository (plain or ``.xz``)."""
    if relpath.startswith("tiktoken/") and relpath.endswith(".tiktoken"):
        embedded = REPO / "tokstream" / "data" / (relpath.removeprefix("tiktoken/") + ".xz")
        return embedded if embedded.is_file() else None
    for path in (DATA / relpath, DATA / (relpath + ".xz")):
        if path.is_file():
            return path
    return None


@functools.cache
def _vendored(relpath: str) -> Path:
    """The vendored fixture as a plain file, unpacked if need be, its sum checked."""
    stored = _stored(relpath)
    assert stored is not None, relpath
    want = vendored_sums().get(relpath)
    if want is None:
        raise AssertionError(f"tests/data/SHA256SUMS has no line for {relpath}; run tools/vendor_fixtures.py")
    if stored.suffix != ".xz":
        path = stored
    else:
        path = UNPACKED / want[:16] / Path(relpath).name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write aside and rename: xdist workers may unpack the same file at once.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
            with os.fdopen(fd, "wb") as out:
                out.write(lzma.decompress(stored.read_bytes()))
            os.replace(tmp, path)
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != want:
        raise AssertionError(f"{path} (from {stored}) has sha256 {got}, not {want} as tests/data/SHA256SUMS says")
    return path


def has_fixture(relpath: str | os.PathLike[str]) -> bool:
    """Whether the fixture file exists (for collection-time choices that must not skip)."""
    rel = Path(relpath).as_posix()
    return _stored(rel) is not None or (FIXTURES / rel).is_file()


def fixture_file(relpath: str | os.PathLike[str]) -> Path:
    """The path of a fixture file (``"hf/gpt2_tokenizer.json"``): the vendored copy
    (unpacked, its sum checked) or the one in ``FIXTURES``; skips the calling test
    when there is neither (``missing_fixture``)."""
    rel = Path(relpath).as_posix()
    if _stored(rel) is not None:
        return _vendored(rel)
    path = FIXTURES / rel
    if not path.is_file():
        missing_fixture(
            f"fixture file {rel} not found under {FIXTURES} (it is not vendored in tests/data; "
            "set TOKSTREAM_FIXTURES to a folder holding it)"
        )
    return path


@functools.cache
def _read_text(relpath: str) -> str:
    return fixture_file(relpath).read_text(encoding="utf-8")


def fixture_text(relpath: str | os.PathLike[str]) -> str:
    """A fixture file's text (UTF-8, universal newlines), read once; skips when absent.

    Files whose ``\\r`` matter (the llama.cpp vectors) are read with
    ``fixture_file(...).read_bytes()``.
    """
    return _read_text(Path(relpath).as_posix())


def fixture_names(folder: str, pattern: str = "*") -> list[str]:
    """The sorted names of the fixture files in ``folder`` matching ``pattern``,
    vendored or not; ``[]`` when there are none (for parametrizing at collection time)."""
    names = set()
    vendored = DATA / folder
    if vendored.is_dir():
        names.update(p.name.removesuffix(".xz") for p in vendored.iterdir() if p.is_file())
    shared = FIXTURES / folder
    if shared.is_dir():
        names.update(p.name for p in shared.iterdir() if p.is_file())
    return sorted(name for name in names if fnmatch.fnmatchcase(name, pattern))


def load_script(relpath: str, module_name: str) -> ModuleType:
    """Import ``examples/x.py`` or ``tools/x.py`` (scripts, not a package) by path, as
    ``module_name``. The module is registered in ``sys.modules`` while it runs and after
    (dataclasses look their module up while a class is built)."""
    import sys

    spec = importlib.util.spec_from_file_location(module_name, REPO / relpath)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` by path, as ``<name>_example``."""
    return load_script(f"examples/{name}.py", f"{name}_example")


def load_tool(name: str) -> ModuleType:
    """Import ``tools/<name>.py`` by path, as ``<name>``."""
    return load_script(f"tools/{name}.py", name)


# ------------------------------------------------------ tokenizers and references


@functools.cache
def tiktoken_reference(name: str) -> Any:
    """The reference ``tiktoken.Encoding`` ``name``, built fully offline; skips when
    tiktoken or the rank file is missing.

    tiktoken's own constructors (``tiktoken_ext.openai_public``) supply the pattern and
    specials, and their ``load_tiktoken_bpe`` is pointed at the local rank file for the
    duration of the call (the file's sha256 is still checked against tiktoken's
    expected hash).
    """
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    local = fixture_file(f"tiktoken/{name}.tiktoken")
    real_load = tiktoken.load.load_tiktoken_bpe

    def load_local(blobpath: str, expected_hash: str | None = None) -> Any:
        # Only the file name of tiktoken's URL matters; the hash is still checked.
        assert blobpath.rsplit("/", 1)[-1] == local.name, blobpath
        return real_load(str(local), expected_hash)

    # TIKTOKEN_CACHE_DIR="" stops tiktoken copying the file into its cache dir.
    with (
        mock.patch.object(openai_public, "load_tiktoken_bpe", load_local),
        mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": ""}),
    ):
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
    return tiktoken.Encoding(**spec)


def hf_reference(path: Path) -> Any:
    """``tokenizers.Tokenizer`` for a tokenizer.json, padding and truncation off (the
    BERT fixture ships with both on; they shape batches, not ids)."""
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


#: Every fixture tokenizer by id: the four embedded encodings, the tokenizer.json
#: files (``hf/...``) and the SentencePiece models (``spm/...``).
TOKENIZER_IDS = (
    *ENCODING_NAMES,
    *(f"hf/{name}" for name in HF_FILES),
    "spm/mistral_7b_v1_tokenizer.model",
    "spm/spm_botchan_en_bpe_1000.model",
    "spm/spm_botchan_en_unigram_1000.model",
)
#: The byte-level ones (every token is raw bytes; decode is byte-local).
BYTE_LEVEL_IDS = ("o200k_base", "r50k_base", "hf/llama3_tokenizer.json")
_TOKENIZERS: dict[str, tokstream.Tokenizer] = {}


def fixture_tokenizer(tid: str) -> tokstream.Tokenizer:
    """A tokenizer from ``TOKENIZER_IDS``, loaded once; skips when its file is absent."""
    if tid not in _TOKENIZERS:
        if tid.startswith("hf/"):
            _TOKENIZERS[tid] = tokstream.Tokenizer.from_file(fixture_file(tid))
        elif tid.startswith("spm/"):
            _TOKENIZERS[tid] = tokstream.Tokenizer.from_sentencepiece(fixture_file(tid))
        else:
            _TOKENIZERS[tid] = tokstream.load(tid)
    return _TOKENIZERS[tid]


_PUBLIC_BYTES: dict[str, tuple[bytes, ...]] = {}


def public_token_bytes(tid: str) -> tuple[bytes, ...]:
    """Each id's bytes of a ``TOKENIZER_IDS`` tokenizer read by the public API, id by
    id (``tok.token_bytes``), ``b""`` for special tokens and ids without text: the
    brute-force reference of the constraint and mask tests."""
    if tid not in _PUBLIC_BYTES:
        tok = fixture_tokenizer(tid)
        specials = set(tok.special_tokens.values())
        out = []
        for i in range(tok.n_vocab):
            try:
                data = tok.token_bytes(i)
            except ValueError:
                data = b""
            out.append(b"" if i in specials else data)
        _PUBLIC_BYTES[tid] = tuple(out)
    return _PUBLIC_BYTES[tid]


# ------------------------------------------------------------------ mismatches


def first_difference(
    ours: Sequence[Any], theirs: Sequence[Any], *, key: Callable[[Any], Any] | None = None
) -> int | None:
    """The first index where ``ours`` and ``theirs`` differ (compared through ``key``
    when given); the shorter one's length when one is a prefix of the other; ``None``
    when they are equal.

    >>> first_difference([1, 2, 3], [1, 5, 3]), first_difference("ab", "abc"), first_difference("x", "x")
    (1, 2, None)
    """
    same: Callable[[Any, Any], bool] = (lambda a, b: a == b) if key is None else (lambda a, b: key(a) == key(b))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if not same(a, b):
            return k
    return None if len(ours) == len(theirs) else min(len(ours), len(theirs))


def _render(items: Sequence[Any], lo: int, hi: int, show: Callable[[Any], str] | None) -> str:
    window = items[lo:hi]
    if show is None:
        return repr(window)
    out = []
    for item in window:
        try:
            out.append(show(item))
        except Exception as e:
            out.append(f"{item!r}=<{type(e).__name__}: {e}>")
    return "[" + ", ".join(out) + "]"


def describe_difference(
    ours: Sequence[Any],
    theirs: Sequence[Any],
    *,
    what: str = "",
    names: tuple[str, str] = ("tokstream", "reference"),
    show: Callable[[Any], str] | None = None,
    show_theirs: Callable[[Any], str] | None = None,
    key: Callable[[Any], Any] | None = None,
    context: int = 3,
    notes: Iterable[str] = (),
    text: str | None = None,
) -> str:
    """The report of a mismatch: the first differing index (``first_difference``), both
    sides' lengths, and ``context`` items either side of it on each side.

    ``show`` renders one item (an id as its piece, say; ``repr`` by default, the items
    of a ``str`` as one substring); ``show_theirs`` renders the other side's items
    (``show`` by default). ``notes`` are extra lines; ``text`` is the input, shown whole
    up to 300 characters, else its start.

    >>> print(describe_difference([1, 2, 3], [1, 2, 4], what="encode", names=("ours", "tiktoken")))
    encode: first difference at index 2 (ours: length 3, tiktoken: length 3)
      ours[0:3]     = [1, 2, 3]
      tiktoken[0:3] = [1, 2, 4]
    """
    i = first_difference(ours, theirs, key=key)
    head = f"{what}: " if what else ""
    if i is None:
        return f"{head}no difference ({names[0]}: length {len(ours)}, {names[1]}: length {len(theirs)})"
    lo, hi = max(0, i - context), min(i + context + 1, max(len(ours), len(theirs)))
    width = max(len(n) for n in names) + len(f"[{lo}:{hi}]")
    left, right = f"{names[0]}[{lo}:{hi}]", f"{names[1]}[{lo}:{hi}]"
    lines = [
        f"{head}first difference at index {i} ({names[0]}: length {len(ours)}, {names[1]}: length {len(theirs)})",
        f"  {left:<{width}} = {_render(ours, lo, hi, show)}",
        f"  {right:<{width}} = {_render(theirs, lo, hi, show_theirs or show)}",
        *(f"  {note}" for note in notes),
    ]
    if text is not None:
        shown = repr(text) if len(text) <= 300 else f"{text[:120]!r} ... ({len(text)} chars)"
        lines.append(f"  text = {shown}")
    return "\n".join(lines)


def assert_sequences_equal(ours: Sequence[Any], theirs: Sequence[Any], **options: Any) -> None:
    """Assert that two sequences (ids, pieces, spans, text) are equal (item by item
    through ``key`` when given); on a mismatch raise ``AssertionError`` with
    ``describe_difference(ours, theirs, **options)``."""
    __tracebackhide__ = True
    if first_difference(ours, theirs, key=options.get("key")) is None:
        return
    raise AssertionError(describe_difference(ours, theirs, **options))


def hf_pair(doc: dict[str, Any]) -> tuple[tokstream.Tokenizer, Any]:
    """``(ours, theirs)``: a hand-made tokenizer.json document (``pipeline.tokenizer_json``)
    loaded by ``tokstream.Tokenizer.from_str`` and ``tokenizers.Tokenizer.from_str``."""
    tokenizers = pytest.importorskip("tokenizers")
    text = json.dumps(doc)
    return tokstream.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


def assert_same_as_tokenizers(ours: tokstream.Tokenizer, theirs: Any, text: str) -> None:
    """``text`` through both, with and without special tokens: the ids, each id's token,
    the offsets (``encode_with_offsets``) and the decoded text, with and without
    special tokens. Added tokens' literals are tokens on both sides."""
    __tracebackhide__ = True
    for add in (False, True):
        enc = theirs.encode(text, add_special_tokens=add)
        what = f"add_special_tokens={add}"
        ids = ours.encode(text, allowed_special="all", add_special_tokens=add)
        assert_sequences_equal(ids, enc.ids, what=f"ids, {what}", names=("tokstream", "tokenizers"), text=text)
        tokens = [ours.id_to_token(i) for i in ids]
        assert_sequences_equal(tokens, enc.tokens, what=f"tokens, {what}", names=("tokstream", "tokenizers"), text=text)
        got, offsets = ours.encode_with_offsets(text, allowed_special="all", add_special_tokens=add)
        assert got == ids, f"encode_with_offsets ids differ from encode ({what}): {text!r}"
        assert_sequences_equal(
            offsets, enc.offsets, what=f"offsets, {what}", names=("tokstream", "tokenizers"), text=text
        )
        for skip in (False, True):
            want = theirs.decode(enc.ids, skip_special_tokens=skip)
            assert ours.decode(ids, skip_special_tokens=skip) == want, (
                f"decode(skip_special_tokens={skip}) of {enc.ids} differs from tokenizers' {want!r}: {text!r}"
            )


def assert_streams_like_encode(tok: tokstream.Tokenizer, text: str, cuts: Iterable[int]) -> None:
    """Streaming ``text`` in the chunks that ``cuts`` (offsets) make gives ``encode``'s ids
    (``StreamEncoder``, scanning at every push), and at every cut the stable boundary
    of the text so far holds: its ids are a prefix of the whole text's."""
    __tracebackhide__ = True
    whole = tok.encode(text, allowed_special="all")
    points = sorted({min(max(c, 0), len(text)) for c in cuts} | {len(text)})
    enc = tokstream.StreamEncoder(tok, allowed_special="all", batch=1)
    streamed: list[int] = []
    start = 0
    for end in points:
        streamed += enc.push(text[start:end])
        b = tok.stable_boundary(text[:end], allowed_special="all")
        head = tok.encode(text[:b], allowed_special="all")
        assert whole[: len(head)] == head, f"stable_boundary {b} of {text[:end]!r} is not a cut of {text!r}"
        start = end
    streamed += enc.finish()
    assert_sequences_equal(streamed, whole, what="streamed ids", names=("StreamEncoder", "encode"), text=text)


def assert_same_ids_as_tiktoken(
    ours: list[int], ref: list[int], text: str, *, tok: Any = None, enc: Any = None, what: str = "encode"
) -> None:
    """``assert_sequences_equal`` for tokstream's ids against tiktoken's: the pieces of
    both sides (through ``tok.token_bytes`` and ``enc.decode_single_token_bytes`` when
    given) and the input bytes around the byte offset where the two diverge."""
    __tracebackhide__ = True
    if ours == ref:
        return
    notes = []
    if enc is not None:
        i = first_difference(ours, ref)
        data = replace_surrogates(text).encode("utf-8")
        at = len(enc.decode_bytes(ref[:i]))
        notes.append(f"input bytes around offset {at}: {data[max(0, at - 20) : at + 30]!r}")
    raise AssertionError(
        describe_difference(
            ours,
            ref,
            what=what,
            names=("tokstream", "tiktoken"),
            show=None if tok is None else (lambda t: f"{t}={tok.token_bytes(t)!r}"),
            show_theirs=None if enc is None else (lambda t: f"{t}={enc.decode_single_token_bytes(t)!r}"),
            notes=notes,
            text=text,
        )
    )


# ------------------------------------------------------------- package source


def module_name(path: Path) -> str:
    """``tokstream/a/b.py`` -> ``tokstream.a.b``; ``tokstream/a/__init__.py`` -> ``tokstream.a``."""
    parts = path.resolve().relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def package_modules() -> dict[str, Path]:
    """Every module of the ``tokstream`` package by dotted name, from its files (nothing
    is imported)."""
    return {module_name(p): p for p in sorted((REPO / "tokstream").rglob("*.py"))}


class Import(NamedTuple):
    """One import in a module's source.

    ``module`` is the module it loads, resolved (relative imports against the importing
    module's package; ``from pkg import name`` to ``pkg.name`` when that is a module,
    else to ``pkg``); ``name`` is the name taken from ``module`` by ``from module import
    name`` (``None`` for ``import module`` and for submodules); ``line`` is where.
    """

    module: str
    name: str | None
    line: int


def is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` (or ``typing.TYPE_CHECKING``)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def walk_source(node: ast.AST, *, type_checking: bool = True) -> Iterator[ast.AST]:
    """Every node under ``node`` (like ``ast.walk``, depth first); with
    ``type_checking=False`` the bodies of ``if TYPE_CHECKING:`` are left out (they never
    run; their ``else:`` does)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not type_checking and isinstance(child, ast.If) and is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from walk_source(other, type_checking=type_checking)
            continue
        yield from walk_source(child, type_checking=type_checking)


def _package_of(module: str) -> str:
    """The package a module's relative imports start from."""
    is_package = package_modules()[module].name == "__init__.py"
    return module if is_package else module.rpartition(".")[0]


def _import_module_name(call: ast.Call, module: str) -> str | None:
    """The module named by ``importlib.import_module("...")`` or ``f"{__package__}..."``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "import_module" and call.args):
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and len(arg.values) == 2:
        head, tail = arg.values
        if (
            isinstance(head, ast.FormattedValue)
            and isinstance(head.value, ast.Name)
            and head.value.id == "__package__"
            and isinstance(tail, ast.Constant)
        ):
            return _package_of(module) + str(tail.value)
    return None


def parse_module(module: str) -> ast.Module:
    """The ``ast`` of a ``tokstream`` module's source."""
    path = package_modules()[module]
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_imports(module: str, *, type_checking: bool = True, tree: ast.AST | None = None) -> list[Import]:
    """The imports of ``tokstream`` modules in ``module``'s source (or in ``tree``, read
    as if it were that module's): module-level and function-level ones,
    ``importlib.import_module`` with a literal name; those in ``if TYPE_CHECKING:`` only
    when ``type_checking``. Imports by computed names and ``__import__`` are not seen."""
    modules = package_modules()
    path = modules[module]
    if tree is None:
        tree = parse_module(module)
    found: list[Import] = []
    for node in walk_source(tree, type_checking=type_checking):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module)
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.append(Import(f"{base}.{alias.name}", None, node.lineno))
                else:
                    found.append(Import(base, alias.name, node.lineno))
        elif isinstance(node, ast.Call):
            name = _import_module_name(node, module)
            if name is not None:
                found.append(Import(name, None, node.lineno))
    ours = [imp for imp in found if imp.module == "tokstream" or imp.module.startswith("tokstream.")]
    for imp in ours:
        assert imp.module in modules, f"{path}:{imp.line}: no module {imp.module}"
    return ours


# ----------------------------------------------------------------------- generate


def generate_pair(
    model: Any, ids: Sequence[int], processor: Any, mode: str, max_new_tokens: int, eos: int
) -> list[list[int]]:
    """``model.generate`` on a batch of two copies of ``ids`` under ``processor``
    (``mode``: "sample", or "beam" for a 3-beam search), two sequences returned per
    row; the new ids of each of the four (torch and transformers must be importable)."""
    import torch
    import transformers

    kwargs: dict[str, Any] = {"do_sample": True} if mode == "sample" else {"num_beams": 3, "do_sample": False}
    out = model.generate(
        torch.tensor([list(ids), list(ids)]),
        attention_mask=torch.ones(2, len(ids), dtype=torch.long),
        logits_processor=transformers.LogitsProcessorList([processor]),
        max_new_tokens=max_new_tokens,
        eos_token_id=eos,
        pad_token_id=eos,
        num_return_sequences=2,
        **kwargs,
    )
    assert out.shape[0] == 4
    rows: list[list[int]] = out[:, len(ids) :].tolist()
    return rows


def generate_one(model: Any, ids: Sequence[int], processor: Any, eos: int, **kwargs: Any) -> list[int]:
    """``model.generate`` on one prompt under ``processor`` (``max_new_tokens`` 8 unless
    given; ``kwargs`` go to ``generate``); the new ids (torch and transformers must be
    importable)."""
    import torch
    import transformers

    kwargs.setdefault("max_new_tokens", 8)
    out = model.generate(
        torch.tensor([list(ids)]),
        attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        logits_processor=transformers.LogitsProcessorList([processor]),
        eos_token_id=eos,
        pad_token_id=eos,
        **kwargs,
    )
    new: list[int] = out[0, len(ids) :].tolist()
    return new


def tiny_llama(
    vocab_size: int, *, width: int = 16, layers: int = 1, positions: int = 256, seed: int = 0, **config: Any
) -> Any:
    """A tiny random ``transformers.LlamaForCausalLM`` (2 heads, MLP twice ``width``)
    with ``vocab_size`` rows, seeded; ``config`` adds or overrides ``LlamaConfig``
    fields (torch and transformers must be importable)."""
    import torch
    import transformers

    fields: dict[str, Any] = {
        "vocab_size": vocab_size,
        "hidden_size": width,
        "intermediate_size": 2 * width,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "max_position_embeddings": positions,
    }
    fields.update(config)
    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**fields))
