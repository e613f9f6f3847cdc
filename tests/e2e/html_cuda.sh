#!/bin/bash
# html_cuda — the --html page of a CUDA run on the simulated CUPTI
# (tests/cuda/workload.c): the Operators/CUDA and Kernels views render with
# every kernel of the JSON report in the kernel table, the timeline has a
# lane per GPU stream and per thread calling the CUDA API besides the
# threads' lanes, draws them all and lines from launches to kernels, and the
# page logs no error.  One browser launch, screenshot kept.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --html "$T/c.html" -- "$W" main 5
expect_rc 5
kernels=$(html_data "$T/c.html" 'len(d["report"]["cuda"]["kernels"])')
gpu_lanes=$(html_data "$T/c.html" 'sum(l["kind"] == "gpu" for l in d["html"]["timeline"]["lanes"])')
lanes=$(html_data "$T/c.html" 'len(d["html"]["timeline"]["lanes"])')
note "kernels=$kernels lanes=$lanes (gpu $gpu_lanes)"
[ "$kernels" -ge 2 ] || fail "the simulated workload has at least 2 kernels, the page $kernels"
[ "$gpu_lanes" -ge 1 ] || fail "no GPU stream lane in the page's timeline"

html_open "$T/c.html" '#all&selftest=all' html_cuda 5000
html_expect '^render cuda ok' '^render kernels ok' '^render timeline ok' \
	"^selftest timeline\\.lanes ok lanes=$lanes .*flows=[1-9]" '^selftest cpu\.zoom ok' \
	'^selftest overview\.breakdown ok bars=[1-9][0-9]* per=bin legend=GPU busy\|.*\|Idle axis='
rows=$(/usr/bin/python3 - "$DOM" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
sec = t[t.index('id="view-kernels"'):]
sec = sec[:sec.index('</section>')]
print(sec.count("<tr") - 1)
PY
)
[ "$rows" = "$kernels" ] || fail "the kernel table has $rows rows, the report $kernels kernels"
exit 0
