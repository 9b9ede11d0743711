"""The layers above the core use it only through public names (STYLE.md, "Layers and
their contracts": a private name crossing a layer is a missing public one).

The layers checked are ``tokstream/stream/``, ``cache/``, ``constrain/`` and
``integrations/``, and the programs ``demo.py`` and ``cli.py`` (``LAYERS``). Each file's
source is read with ``ast`` (so comments and docstrings do not count) and fails, naming
file and line, on:

- an attribute access to a private name (``_x``, not ``__x__``) that is not the
  layer's own: ``tok._x``, ``self.tok._x``, ``vocab._x`` (a receiver named like a core
  object: ``CORE_RECEIVERS``), a name the layer does not define itself (``._table``,
  ``._pipeline``, ``decoders._decode_bytes``), or one of the core's known private
  names (``CORE_PRIVATE``) on anything but ``self``/``cls``; ``getattr(obj, "_x")``
  counts as ``obj._x``;
- an import of a private module outside the layer (``tokstream._fastpath``,
  ``from .. import _parallel``, ``tokstream.models._vocab``), ``if TYPE_CHECKING:``
  blocks included;
- ``from <module outside the layer> import _private_name``.

A layer's own private names are fine: those its classes and modules define (methods,
class attributes, ``__slots__``, attributes assigned anywhere in the layer, module-level
names), on ``self`` or on another object (``other._state`` in a copy method), and
private names imported from a sibling module of the same layer package.
"""

from __future__ import annotations

import ast

import pytest
from helpers import REPO, module_imports, package_modules, parse_module

#: Layer -> the modules whose private names are its own.
LAYERS = {
    "tokstream/stream": "tokstream.stream",
    "tokstream/cache": "tokstream.cache",
    "tokstream/constrain": "tokstream.constrain",
    "tokstream/integrations": "tokstream.integrations",
    "tokstream/view": "tokstream.view",
    "tokstream/demo.py": "tokstream.demo",
    "tokstream/cli.py": "tokstream.cli",
}
#: Receivers that hold core objects whatever the layer calls its own attributes.
CORE_RECEIVERS = frozenset({"tok", "_tok", "tokenizer", "_tokenizer", "vocab", "_vocab", "pipeline", "_pipeline"})
#: Private names of the core that layers used to reach for.
CORE_PRIVATE = frozenset({"_table", "_special_ids", "_pipeline", "_policy", "_encode_part", "_stream_cut"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _layer_of(module: str) -> str:
    return next(own for own in LAYERS.values() if module == own or module.startswith(own + "."))


def _in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


def _receiver(node: ast.expr) -> str | None:
    """The name an attribute is read from: ``tok`` for ``tok._x``, ``_tok`` for
    ``self._tok._x`` and ``self._tok()._x`` (a weak reference)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _receiver(node.func)
    if isinstance(node, ast.Subscript):
        return _receiver(node.value)
    return None


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _attribute_reads(tree: ast.AST) -> list[tuple[ast.expr, str, int]]:
    """``(receiver, name, line)`` for each ``x.name`` and ``getattr(x, "name")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            found.append((node.value, node.attr, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.append((node.args[0], node.args[1].value, node.lineno))
    return found


def own_names(tree: ast.AST) -> set[str]:
    """The names a module defines: module-level and class-level names, methods,
    ``__slots__`` entries, and attributes it assigns (on anything but a core object)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if _receiver(node.value) not in CORE_RECEIVERS:
                names.add(node.attr)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            names.update(
                c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
    return names


def layer_names(layer: str) -> set[str]:
    """``own_names`` of every module of the layer."""
    names: set[str] = set()
    for module in package_modules():
        if _in_layer(module, layer):
            names |= own_names(parse_module(module))
    return names


def violations(module: str, tree: ast.AST) -> list[str]:
    """What in ``module`` (its source parsed as ``tree``) uses a private name from
    outside its layer."""
    layer = _layer_of(module)
    path = package_modules()[module].relative_to(REPO)
    own = layer_names(layer) | own_names(tree)
    out: list[tuple[int, str]] = []
    for receiver, name, line in _attribute_reads(tree):
        if not _private(name):
            continue
        holder = _receiver(receiver)
        if holder in CORE_RECEIVERS:
            why = f"private attribute {name!r} of a core object ({holder!r})"
        elif name not in own:
            why = f"private attribute {name!r}, not defined in {layer}"
        elif name in CORE_PRIVATE and not _is_self(receiver):
            why = f"the core's private attribute {name!r}"
        else:
            continue
        out.append((line, f"{path}:{line}: {why}: {ast.unparse(receiver)}.{name}"))
    for imp in module_imports(module, tree=tree):
        if _in_layer(imp.module, layer):
            continue
        if any(_private(part) for part in imp.module.split(".")):
            out.append((imp.line, f"{path}:{imp.line}: imports the private module {imp.module}"))
        elif imp.name is not None and _private(imp.name):
            out.append((imp.line, f"{path}:{imp.line}: imports the private name {imp.name!r} from {imp.module}"))
    return [message for _, message in sorted(out)]


def _layer_modules() -> list[str]:
    return [m for m in package_modules() if any(_in_layer(m, own) for own in LAYERS.values())]


@pytest.mark.slow
@pytest.mark.parametrize("module", _layer_modules())
def test_layer_uses_public_names_only(module: str) -> None:
    found = violations(module, parse_module(module))
    if found:
        pytest.fail(
            f"{len(found)} use(s) of private names from outside the layer (add a public name "
            "to the core instead):\n" + "\n".join(f"  {v}" for v in found),
            pytrace=False,
        )


def test_every_layer_has_modules() -> None:
    for folder, layer in LAYERS.items():
        assert (REPO / folder).exists(), folder
        assert any(_in_layer(m, layer) for m in _layer_modules()), layer


# A source planted in the stream layer: every line marked `bad` must be reported, the
# others not.
PLANTED = """
import tokstream._fastpath  # bad
from .. import _parallel  # bad
from ..models import _vocab  # bad
from ..tokenizer import Tokenizer, _check  # bad
from .stops import _Helper
from .decoder import StreamDecoder


class Mine:
    __slots__ = ("_state", "_tok")

    def __init__(self, tok):
        self._tok = tok
        self._state = 0

    def copy(self, other):
        other._state = self._state
        return other._state

    def bad(self, tok, vocab, decoders, thing):
        tok._table  # bad
        self._tok._stream_cut("x")  # bad
        self.tok._policy(None)  # bad
        vocab._index  # bad
        decoders._decode_bytes(b"")  # bad
        thing._special_ids  # bad
        getattr(tok, "_encode_part")  # bad
        self._state  # fine
        StreamDecoder._compute  # fine: a name of the stream layer
        return tok.__class__, tok.vocab, tok.stable_boundary("x")  # fine
"""


def test_violations_are_found_in_a_planted_source() -> None:
    # Read as if it were tokstream/stream/decoder.py.
    found = violations("tokstream.stream.decoder", ast.parse(PLANTED))
    bad = {i for i, text in enumerate(PLANTED.splitlines(), 1) if text.endswith("# bad")}
    reported = {int(v.split(":")[1]) for v in found}
    assert reported == bad, "\n".join(found)
    assert len(found) == len(bad)
