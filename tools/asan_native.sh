#!/usr/bin/env bash
# Build tokstream._native with AddressSanitizer and UndefinedBehaviorSanitizer into a
# scratch copy of the package, then run the native-vs-pure differential tests (and the
# million-byte runs) on it. Usage: tools/asan_native.sh [python]  (default: python3)
# Python itself is not instrumented, so libasan is preloaded and leak checking is off
# (the interpreter's own allocations at exit are not ours to judge).
set -euo pipefail
PY="${1:-python3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp -r "$ROOT/tokstream" "$ROOT/tests" "$ROOT/pyproject.toml" "$WORK/"
rm -f "$WORK"/tokstream/_native*.so
INC="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
SUFFIX="$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
gcc -shared -fPIC -O1 -g -std=c99 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
    -I"$INC" "$ROOT/tokstream/_native.c" "$ROOT/tokstream/_native_text.c" "$ROOT/tokstream/_native_keys.c" -o "$WORK/tokstream/_native$SUFFIX"
LIBASAN="$(gcc -print-file-name=libasan.so)"
LIBUBSAN="$(gcc -print-file-name=libubsan.so)"
cd "$WORK"
env LD_PRELOAD="$LIBASAN:$LIBUBSAN" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$WORK" "$PY" -c \
    "import tokstream._native as n, sys; assert n.__file__.startswith(sys.argv[1]), n.__file__; print('instrumented:', n.__file__)" "$WORK"
# PYTHONPATH puts the instrumented copy ahead of any installed tokstream.
run() {
    env LD_PRELOAD="$LIBASAN:$LIBUBSAN" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 PYTHONPATH="$WORK" \
        TOKSTREAM_EXPECT_NATIVE=1 "$PY" -m pytest -p no:cacheprovider -n 0 -q --run-slow "$@"
}
run tests/models/test_native.py tests/test_tiktoken_diff.py -k "native or long or pathological or run"
# The text encoder and the block keys: every test of theirs.
run tests/test_native_text.py tests/cache/test_block_hash.py
