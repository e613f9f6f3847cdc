#!/usr/bin/env bash
# py_own.sh VERSION — run.sh on progs/py_own.py with CPython VERSION (the
# system's, pyenv's, or on PATH; skipped when there is none): the script's
# views of its threads, environment and os.fork() must read as plainly.
set -u
v=${1:?usage: py_own.sh VERSION}
PY=
for p in "/usr/bin/python$v" "${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".*/bin/"python$v" \
	/root/.pyenv/versions/"$v".*/bin/"python$v" "$(command -v "python$v" 2>/dev/null)"; do
	case "$p" in */shims/*) continue ;; esac
	if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import sys' 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || { echo "SKIP: no CPython $v here (a fresh Debian 12 has 3.11 only)"; exit 77; }
exec bash "$(dirname "$0")/run.sh" "$PY" "$(dirname "$0")/progs/py_own.py"
