# python.bash — helpers of the Python-frame tests (tests/e2e/py_*.sh; source
# it after common.bash).  py_find VERSION prints the interpreter to test:
# Debian's /usr/bin/pythonVERSION (python3.11, which tools/deps.sh installs),
# else pyenv's build ($PYENV_ROOT or ~/.pyenv: versions/VERSION.*), else one on
# PATH; py_need VERSION sets $PY or skips saying where it looked.

WORKLOADS="$CBN_SOURCE_DIR/tests/python/workloads.py"
COMPARE="$CBN_SOURCE_DIR/tests/python/compare.py"

py_find()
{
	local v=$1 p
	for p in "/usr/bin/python$v" \
		"${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".*/bin/"python$v" \
		/root/.pyenv/versions/"$v".*/bin/"python$v" \
		"$(command -v "python$v" 2>/dev/null)"; do
		case "$p" in */shims/*) continue ;; esac
		[ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import sys' 2>/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

py_need()
{
	PY=$(py_find "$1") || skip "no CPython $1 here (looked for /usr/bin/python$1, pyenv's versions/$1.*, python$1 on PATH); a fresh Debian 12 has 3.11 only"
	note "testing $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
}

# py_scenario NAME [CPROFILE]: run workloads.py NAME under cbottleneck (json,
# folded; the script writes what CPU its parts took to NAME.truth) and, with
# CPROFILE=1, under cProfile on CPU time (cprofile_cpu.py); then compare.py.
# A miss is measured again once, longer (a loaded machine samples a short run
# coarsely); cProfile's run is not made again.
py_scenario()
{
	local name=$1 with_cp=${2:-0} scale prof
	for scale in "$SCALE" 1.0; do
		rm -f "$T/$name.truth"
		WORKLOADS_TRUTH="$T/$name.truth" run_cbn -F 999 --json "$T/$name.json" \
			--folded "$T/$name.folded" -- "$PY" "$WORKLOADS" "$name" "$scale"
		expect_rc 0
		grep -q "^$name: done$" "$OUTF" || fail "$name: the program's output is missing"
		[ "$name" != split ] || validate_schema "$T/$name.json"
		prof=-
		if [ "$with_cp" = 1 ]; then
			# once: compare.py compares shares and ratios, which the
			# scale does not change, and cProfile's 3-4x on a loaded
			# machine made a retry at SCALE 1.0 outlast the test's 300 s
			prof="$T/$name.prof"
			[ -s "$prof" ] || "$PY" "$CBN_SOURCE_DIR/tests/python/cprofile_cpu.py" "$prof" \
				"$WORKLOADS" "$name" "$scale" >/dev/null || fail "$name under cProfile failed"
		fi
		python3 "$COMPARE" "$name" "$T/$name.json" "$T/$name.folded" "$prof" \
			"$T/$name.truth" >"$T/$name.cmp" && return 0
		note "$name at SCALE $scale: $(head -c 300 "$T/$name.cmp")"
	done
	fail "$name: $(cat "$T/$name.cmp")"
}

# py_suite: every scenario of workloads.py against its truth and cProfile.
py_suite()
{
	local s
	for s in split generators stdlib; do
		py_scenario "$s" 1
	done
	for s in recursion exceptions threads cext forked; do
		py_scenario "$s" 0
	done
}
