"""``save`` -> load round trips: ``tokenizers`` loads what we write to the reference ids,
and loading it back with tokstream gives the same ids and the same ``fingerprint``.

The expected ids come from the references: tiktoken for the rank files, ``tokenizers``
on the original ``tokenizer.json`` for those. (SentencePiece ``.model`` files are in
``test_hf_json_save_spm.py``.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import ENCODING_NAMES, HF_FILES, fixture_file, fixture_text, hf_reference
from hypothesis import given
from strategies import adversarial_text, hyp_settings

import tokstream
from tokstream import Tokenizer

tokenizers = pytest.importorskip("tokenizers")

CORPORA = ["corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt"]
# tokenizers cannot take lone surrogates (Python -> Rust str); tiktoken replaces them.
_text = adversarial_text().map(lambda s: s.encode("utf-8", "replace").decode("utf-8"))


class Case:
    """One fixture: ours, the reference's ids, and the saved file in both libraries."""

    def __init__(self, ours: Tokenizer, want: Callable[[str], list[int]], saved: Path) -> None:
        self.ours = ours
        self.want = want
        self.saved = saved
        self.theirs_saved = tokenizers.Tokenizer.from_file(str(saved))
        self.ours_saved = Tokenizer.from_file(saved)

    def check(self, text: str) -> None:
        want = self.want(text)
        assert self.theirs_saved.encode(text, add_special_tokens=False).ids == want, text[:200]
        # tokenizers always matches added tokens: compare with specials allowed.
        assert self.ours_saved.encode(text, allowed_special="all") == want, text[:200]
        assert self.ours.encode(text, allowed_special="all") == want, text[:200]


_cases: dict[str, Case] = {}
Reference = Callable[[str], object]  # conftest's `reference` fixture: name -> tiktoken.Encoding


def case(name: str, tmp_root: Path, reference: Reference) -> Case:
    if name not in _cases:
        saved = tmp_root / f"saved_{name}.json"
        if name in ENCODING_NAMES:
            ours = tokstream.load(name)
            ref = reference(name)
            want: Callable[[str], list[int]] = lambda t: ref.encode(t, allowed_special="all")  # type: ignore[attr-defined]
        else:
            path = fixture_file(f"hf/{name}")
            ours = Tokenizer.from_file(path)
            hf = hf_reference(path)
            want = lambda t: hf.encode(t, add_special_tokens=False).ids
        ours.save(saved)
        _cases[name] = Case(ours, want, saved)
    return _cases[name]


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("saved")
    _cases.clear()


ALL = [*ENCODING_NAMES, *HF_FILES]


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_fingerprint_survives_save_and_load(name: str, tmp_root: Path, reference: Reference) -> None:
    c = case(name, tmp_root, reference)
    assert c.ours_saved.fingerprint == c.ours.fingerprint
    # Saving what we loaded writes the same JSON again.
    again = tmp_root / f"again_{name}.json"
    c.ours_saved.save(again)
    assert json.loads(again.read_text("utf-8")) == json.loads(c.saved.read_text("utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("corpus", CORPORA)
def test_saved_file_gives_reference_ids_on_corpora(
    name: str, corpus: str, tmp_root: Path, reference: Reference
) -> None:
    c = case(name, tmp_root, reference)
    text = fixture_text(f"corpora/{corpus}")
    c.check(text[:40_000])
    for line in text.splitlines()[:100]:
        c.check(line)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
@hyp_settings(300)
@given(text=_text)
def test_saved_file_gives_reference_ids_on_adversarial_text(
    name: str, text: str, tmp_root: Path, reference: Reference
) -> None:
    case(name, tmp_root, reference).check(text)


def test_changed_merge_list_changes_the_fingerprint(tmp_root: Path, reference: Reference) -> None:
    # The fingerprint must tell a rank-file JSON from a near copy.
    c = case("r50k_base", tmp_root, reference)
    obj = json.loads(c.saved.read_text("utf-8"))
    obj["model"]["merges"].pop()
    changed = tmp_root / "changed.json"
    changed.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    assert Tokenizer.from_file(changed).fingerprint != c.ours.fingerprint


def test_special_spelled_like_a_token_cannot_be_saved(tmp_path: Path) -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"hi": 256}
    tok = Tokenizer(ranks, pattern="gpt2", special_tokens={"hi": 257})
    with pytest.raises(ValueError, match="special token 'hi' is spelled like token 256"):
        tok.save(tmp_path / "x.json")
