#!/usr/bin/env bash
# First command of README: install dependencies, build, and profile a bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== build/cbottleneck build/examples/split ==" >&2
exec build/cbottleneck build/examples/split
