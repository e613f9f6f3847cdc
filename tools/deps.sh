#!/usr/bin/env bash
# Installs the Debian packages cbottleneck builds and tests with, if any is missing.
set -euo pipefail
# Build: compiler, CMake, libunwind, elfutils, cJSON, zlib.
pkgs=(cmake make gcc pkg-config libunwind-dev libdw-dev libelf-dev libcjson-dev zlib1g-dev binutils)
# Tests (tools/test.sh passes --test): schema validation, a static libc for the
# static-binary refusal test, C++ fixtures, libc debug info for the symbolizer
# oracle, `go tool pprof` as a real consumer of --pprof output (and go to
# build a cgo program, e2e.go_cgo), gfortran for a Fortran program's names
# (e2e.fortran), xz for the
# MiniDebugInfo fixture, a real debuginfod server for the symbolizer's
# client, and jemalloc and tcmalloc for the allocation hooks' hostile runs
# (a user's preloaded allocator behind libcbottleneck_mem.so), chromium,
# the headless browser the --html page's tests open it in (docs/html.md),
# tmux (a terminal for the Ctrl-C tests of hostile.signals_once), Open MPI
# (mpirun, and mpi.h for libcbottleneck_mpi.so and the MPI example:
# docs/distributed.md), PyTorch on the CPU (e2e.nocfi_torch: oneDNN's JIT
# convolutions next to torch.profiler), and sqlite3, a real library program
# whose page the HTML screenshots test opens (tests/e2e/html_shots.sh), and
# libpython3.11, the interpreter a C program embeds (examples/py_embed.c),
# coverage.py, a real tool of the program's own beside --calls, and
# Valgrind, a program run on a simulated CPU (e2e.valgrind_client).
if [ "${1:-}" = "--test" ]; then
	pkgs+=(python3 python3-jsonschema python3-yaml libc6-dev libc6-dbg g++ golang-go gfortran xz-utils
		debuginfod tmux libjemalloc2 libgoogle-perftools4 chromium openmpi-bin libopenmpi-dev
		python3-torch sqlite3 libpython3.11 python3-coverage valgrind)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "cbottleneck: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
