"""Copy the redistributable test fixtures from ``../shared/fixtures`` into ``tests/data``.

Run from the repository root: ``python tools/vendor_fixtures.py [SOURCE]``. It writes
files larger than 64 KB xz-compressed (``name.xz``), smaller ones as they are, and
``tests/data/SHA256SUMS`` with the sums of the *original* files (the same lines as the
upstream ``SHA256SUMS``), which ``tests/helpers.py`` checks after decompressing. The
tiktoken rank files are not copied: the package embeds them (``tokstream/data``), and
the helpers check those against the same sums.

What is copied, and under which licence, is ``tests/data/README.md``; a fixture whose
licence is not clear (the JSONSchemaBench sample) is left out on purpose and stays in
``../shared/fixtures``.
"""

from __future__ import annotations

import hashlib
import lzma
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: Folders (or files) taken whole; everything else in the source is left out.
VENDORED = ("hf", "spm", "corpora", "vectors", "json-schema-test-suite")
#: Kept as plain files at or below this size (the llama.cpp vectors and the JSON Schema
#: suite, read as text or bytes directly); larger ones are compressed.
PLAIN_MAX = 64 * 1024
#: The embedded rank files, whose sums the helpers check too.
TIKTOKEN = ("cl100k_base", "o200k_base", "p50k_base", "r50k_base")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(source: Path) -> None:
    sums: list[str] = []
    for top in VENDORED:
        if (DATA / top).exists():
            shutil.rmtree(DATA / top)
        for path in sorted((source / top).rglob("*")):
            if not path.is_file():
                continue
            rel = path.relative_to(source).as_posix()
            data = path.read_bytes()
            sums.append(f"{sha256(data)}  {rel}")
            out = DATA / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if len(data) <= PLAIN_MAX:
                out.write_bytes(data)
            else:
                out.with_name(out.name + ".xz").write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    for name in TIKTOKEN:
        rel = f"tiktoken/{name}.tiktoken"
        data = (source / rel).read_bytes()
        embedded = lzma.decompress((REPO / "tokstream" / "data" / f"{name}.tiktoken.xz").read_bytes())
        if embedded != data:
            raise SystemExit(f"tokstream/data/{name}.tiktoken.xz is not {source / rel}")
        sums.append(f"{sha256(data)}  {rel}")
    (DATA / "SHA256SUMS").write_text("\n".join(sorted(sums, key=lambda line: line[66:])) + "\n", encoding="utf-8")
    print(f"{len(sums)} files summed into {DATA / 'SHA256SUMS'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "fixtures")
