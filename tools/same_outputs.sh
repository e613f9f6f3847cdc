#!/usr/bin/env bash
# same_outputs.sh — do two builds report the same thing?  The safety net of a
# refactoring: it records a fixed set of sessions once, with BUILD_A's
# launcher and programs, then runs `cbottleneck report` (and `compare`, and
# the gate) of BOTH builds on the very same session directories and JSON
# reports, for every output, and diffs what they wrote.
#
#   tools/same_outputs.sh [-s DIR] [-o DIR] BUILD_A BUILD_B
#     -s DIR  keep the recorded sessions in DIR and reuse them when DIR holds
#             a complete set (record once, compare after every change)
#     -o DIR  keep both builds' outputs in DIR/a and DIR/b (default: a
#             temporary folder, removed)
#   exit status: 0 every output the same, 1 some differ (listed, with the
#   first lines of each diff), 2 usage, 77 BUILD_A lacks a program the set
#   needs (say which).
#
# e.g. the tree as it was against the tree now:
#   git worktree add /tmp/base main && cmake -S /tmp/base -B /tmp/base/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/base/build -j2
#   tools/same_outputs.sh -s /tmp/cbn-sessions /tmp/base/build build
#
# The sessions (what docs/ and tests/e2e run): CPU (split, threads, forkexec,
# inlined, recursion, ranges), simulated CUDA through tests/fakecupti (plain,
# with steps by --step, memory, NCCL, framework operators), --memory
# (mem_peak, mem_leak at every allocation), --off-cpu (wait_lock, wait_io),
# steps (step_spiky by cbn_step, step_cold by --step-func), a Python program,
# and distributed runs (the synthetic 8-rank sessions of bench/gen_session.c,
# straggler and balanced; mpi_straggler under mpirun).  Sessions whose tool
# is absent (CUDA left out of BUILD_A, no python3, no mpirun) are left out,
# and the script says so.
#
# What is compared, per session: the text report (default, and -q with
# --limit 40 --sort cumtime --inline fold), --json, --trace, --pprof
# (unzipped), --folded and --flamegraph for each sample type the session has,
# --html, stderr and the exit status; then `report --baseline` with gates of
# every domain (--markdown, --bench-json) and `compare` of BUILD_A's JSON
# reports (a run against a second run of the same program, the straggler
# against the balanced ranks).
#
# Normalised before the diff (norm()): the two builds' directories become
# BUILD and their output folders OUT/, should a report name the launcher's
# path or the files it wrote.  Nothing else may vary: both builds read one
# recording (times are the session's own) and the same baseline JSON files
# (BUILD_A's), and gzip's header has no time (pprof is compared unzipped
# anyway).  Checked when written: two builds of one tree at different
# paths gave byte-identical outputs even before norm().
set -euo pipefail

usage()
{
	echo "usage: tools/same_outputs.sh [-s SESSIONS_DIR] [-o OUT_DIR] BUILD_A BUILD_B" >&2
	exit 2
}

SESS='' OUTD=''
while getopts 's:o:h' opt; do
	case $opt in
	s) SESS=$OPTARG ;;
	o) OUTD=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
A=$(cd "$1" && pwd) || usage
B=$(cd "$2" && pwd) || usage
SRC=$(cd "$(dirname "$0")/.." && pwd)
for b in "$A" "$B"; do
	[ -x "$b/cbottleneck" ] || { echo "same_outputs: no launcher $b/cbottleneck (build it first)" >&2; exit 2; }
done

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cbn-same.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
[ -n "$SESS" ] || SESS=$SCRATCH/sessions
[ -n "$OUTD" ] || OUTD=$SCRATCH/out
mkdir -p "$SESS" "$OUTD"
SESS=$(cd "$SESS" && pwd)
OUTD=$(cd "$OUTD" && pwd)
EX=$A/examples
CW=$A/tests/cuda/cuda_workload

# The programs are BUILD_A's; both launchers symbolize the same binaries.
need()
{
	[ -x "$1" ] || { echo "same_outputs: $1 is missing: build BUILD_A completely" >&2; exit 77; }
}
for e in split threads forkexec inlined recursion ranges mem_peak mem_leak \
	wait_lock wait_io step_spiky step_cold mpi_straggler; do
	need "$EX/$e"
done

# ---- recording (BUILD_A's launcher, once) ----------------------------------

# rec NAME ARGS...: record session NAME with `cbottleneck -o`, unless the
# set is kept and complete.  Unset DEBUGINFOD_URLS: no network, same symbols.
rec()
{
	local name=$1 rc=0
	shift
	rm -rf "${SESS:?}/$name"
	env -u DEBUGINFOD_URLS "$A/cbottleneck" -q -o "$SESS/$name" --report "$SESS/$name.run.txt" "$@" \
		>"$SESS/$name.stdout" 2>"$SESS/$name.stderr" || rc=$?
	echo "$rc" >"$SESS/$name.rc"
	[ -d "$SESS/$name" ] || { echo "same_outputs: recording $name left no session (status $rc)" >&2; exit 1; }
}

record_all()
{
	echo "recording sessions in $SESS with $A/cbottleneck ..." >&2
	rec cpu_split -- "$EX/split" 0.3
	rec cpu_split2 -- "$EX/split" 0.3
	rec cpu_threads -- "$EX/threads" 0.2
	rec cpu_forkexec -- "$EX/forkexec" 0.2
	rec cpu_inlined -- "$EX/inlined" 0.4
	rec cpu_recursion -- "$EX/recursion" 0.3
	rec cpu_ranges -- "$EX/ranges" 0.3
	rec mem_peak --memory -- "$EX/mem_peak"
	rec mem_leak --memory --memory-rate 1 -- "$EX/mem_leak"
	rec wait_lock --off-cpu -- "$EX/wait_lock" 10
	rec wait_lock2 --off-cpu -- "$EX/wait_lock" 10
	rec wait_io --off-cpu -- "$EX/wait_io"
	rec steps_spiky -- "$EX/step_spiky"
	rec steps_cold -- "$EX/step_cold" 0.3
	# CUDA in BUILD_A: its test program and the simulated CUPTI exist
	if [ -x "$CW" ] && [ -e "$A/tests/fakecupti/libcupti.so.13" ]; then
		LD_LIBRARY_PATH="$A/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" rec_cuda
	fi
	if command -v python3 >/dev/null 2>&1; then
		rec python --memory -- python3 "$SRC/tests/python/views.py" memory
	fi
	local gen=$SESS/gen_session
	cc -std=c11 -D_GNU_SOURCE -O1 -g -I"$SRC/src/format" "$SRC/bench/gen_session.c" -o "$gen"
	rm -rf "$SESS/dist_s" "$SESS/dist_b"
	"$gen" "$SESS/dist_s" 400 8 8 2 >/dev/null
	"$gen" "$SESS/dist_b" 400 8 8 -1 >/dev/null
	if command -v mpirun >/dev/null 2>&1; then
		SLURM_PROCID=0 SLURM_NTASKS=1 OMPI_MCA_mpi_yield_when_idle=1 rec mpi -- \
			mpirun --allow-run-as-root --oversubscribe -np 4 "$EX/mpi_straggler" 10 20
	fi
	[ -e "$SESS/cuda_main" ] || echo "same_outputs: no CUDA in $A: CUDA sessions left out" >&2
	[ -e "$SESS/python" ] || echo "same_outputs: no python3: the Python session left out" >&2
	[ -e "$SESS/mpi" ] || echo "same_outputs: no mpirun: the MPI session left out" >&2
	touch "$SESS/.complete"
}

rec_cuda()
{
	rec cuda_main -F 500 -- "$CW" main 5
	rec cuda_main2 -F 500 -- "$CW" main 5
	rec cuda_steps -F 500 --step '^(setup|compute|teardown)$' -- "$CW" main 0
	rec cuda_memory -F 500 --memory -- "$CW" memory
	rec cuda_nccl -F 200 -- "$CW" nccl
	rec cuda_ops -- "$A/tests/cuda/ops/ops_train"
}

[ -e "$SESS/.complete" ] || record_all

# ---- reporting (both builds) -----------------------------------------------

# norm FILE: what varies between builds and is no behaviour (see the top).
norm()
{
	sed -e "s|$A|BUILD|g" -e "s|$B|BUILD|g" -e "s|$OUTD/[ab]/|OUT/|g" "$1"
}

# each X DIR NAME ARGS...: run `cbottleneck ARGS...` of build X (a or b)
# with its outputs in $OUTD/X/NAME.*; stdout, stderr and the status kept.
each()
{
	local x=$1 dir=$2 name=$3 rc=0
	shift 3
	local o=$OUTD/$x/$name
	env -u DEBUGINFOD_URLS "$dir/cbottleneck" "${@//@O@/$o}" >"$o.stdout" 2>"$o.stderr" || rc=$?
	echo "$rc" >"$o.rc"
	if [ -e "$o.pprof" ]; then
		gzip -dc "$o.pprof" >"$o.pprof.raw" 2>/dev/null || true
		rm -f "$o.pprof"
	fi
}

# both NAME ARGS...: the same command with both builds; @O@ in ARGS is the
# prefix of the output files.
both()
{
	each a "$A" "$@"
	each b "$B" "$@"
}

sessions()
{
	local s
	for s in "$SESS"/*/; do
		s=$(basename "$s")
		[ -e "$SESS/$s.rc" ] || continue
		echo "$s"
	done
}

mkdir -p "$OUTD/a" "$OUTD/b"
rm -f "$OUTD"/a/* "$OUTD"/b/*
for s in $(sessions); do
	d=$SESS/$s
	extra=()
	case $s in
	cuda_steps) extra=(--step '^(setup|compute|teardown)$') ;;
	steps_cold) extra=(--step-func train_step) ;;
	esac
	both "$s" report "${extra[@]}" --report @O@.txt --json @O@.json --trace @O@.trace.json \
		--pprof @O@.pprof --folded @O@.folded --flamegraph @O@.svg --html @O@.html "$d"
	both "$s.q" report -q "${extra[@]}" --limit 40 --sort cumtime --inline fold \
		--report @O@.txt --python native --folded @O@.folded "$d"
	types=()
	case $s in
	wait_*) types+=(wall offcpu) ;;
	esac
	case $s in
	mem_* | cuda_memory | python) types+=(alloc_space alloc_objects inuse_space inuse_objects) ;;
	esac
	for t in ${types[@]+"${types[@]}"}; do
		both "$s.$t" report -q --sample-type "$t" --folded @O@.folded --flamegraph @O@.svg \
			--pprof @O@.pprof "$d"
	done
done
# Distributed: the synthetic sessions, the ranks filter, one rank.
for s in dist_s dist_b; do
	both "$s" report --report @O@.txt --json @O@.json --trace @O@.trace.json --html @O@.html \
		--pprof @O@.pprof --folded @O@.folded "$SESS/$s"
done
both dist_s.ranks report --ranks 0-1,5 --report @O@.txt --json @O@.json "$SESS/dist_s"

# The gate: BUILD_A's JSON reports as baselines (the same file for both).
base()
{
	echo "$OUTD/a/$1.json"
}
gate()
{
	local name=$1 baseline=$2 sess=$3
	shift 3
	both "$name" report -q --baseline "$(base "$baseline")" "$@" --report @O@.txt \
		--markdown @O@.md --bench-json @O@.bench.json "$SESS/$sess"
}
cmp_json()
{
	local name=$1 old=$2 new=$3
	shift 3
	both "$name" compare "$@" --markdown @O@.md --bench-json @O@.bench.json \
		"$(base "$old")" "$(base "$new")"
}
gate gate_cpu cpu_split cpu_split2 --fail 'func[heavy].self:+25%' --warn 'func[light].self:+50%' \
	--fail 'cpu:+30%' --warn 'wall:+10%' --fail 'line[split.c:17].self:+50%'
cmp_json cmp_cpu cpu_split cpu_split2 --fail 'func[heavy].self:+1%' --warn 'samples:+1%'
cmp_json cmp_cpu_self cpu_split cpu_split
gate gate_mem mem_peak mem_peak --fail 'mem.peak:+0' --fail 'mem.leaked:+1%' --fail 'mem.site[*].bytes:+5%'
cmp_json cmp_mem mem_leak mem_peak --fail 'mem.peak:+0' --fail 'mem.leaked:+0'
gate gate_wait wait_lock wait_lock2 --fail 'wait.total:+5%' --fail 'cpu.efficiency:-0.05' \
	--warn 'lock[*].wait:+10%'
cmp_json cmp_wait wait_lock wait_io --fail 'wait.total:+5%' --warn 'cpu.efficiency:-0.05'
gate gate_steps steps_spiky steps_spiky --fail 'step.median:+10%' --fail 'step.p90:+10%' \
	--fail 'step.count:-0'
cmp_json cmp_steps steps_spiky steps_cold --fail 'step.median:+10%' --warn 'step.count:-0'
cmp_json cmp_dist dist_b dist_s --fail 'imbalance:+10%' --fail 'mpi.time:+20%' \
	--fail 'rank.max.wall:+5%'
gate gate_dist dist_s dist_b --fail 'imbalance:+10%' --fail 'mpi.time:+20%'
if [ -e "$OUTD/a/cuda_main.json" ]; then
	gate gate_cuda cuda_main cuda_main2 --fail 'gpu.kernels:+0' --fail 'kernel[*].total:+10%' \
		--warn 'api[cuda*].calls:+0' --fail 'gpu.utilization:-5%' --fail 'gpu.memcpy_bytes:+0'
	cmp_json cmp_cuda cuda_main cuda_memory --fail 'gpu.kernels:+0' --fail 'mem.gpu[0].peak:+0' \
		--warn 'gpu.busy:+5%'
	cmp_json cmp_ops cuda_ops cuda_ops --fail 'op[*].cuda:+10%' --fail 'op[aten::*].self_cpu:+10%' \
		--warn 'op[*].launches:+0'
fi
cmp_json cmp_mixed cpu_split wait_lock

# ---- the diff ---------------------------------------------------------------
differ=0 files=0
for fa in "$OUTD"/a/*; do
	f=$(basename "$fa")
	fb=$OUTD/b/$f
	files=$((files + 1))
	if [ ! -e "$fb" ]; then
		echo "DIFFERS: $f: only BUILD_A wrote it"
		differ=$((differ + 1))
		continue
	fi
	if ! cmp -s <(norm "$fa") <(norm "$fb"); then
		echo "DIFFERS: $f"
		diff <(norm "$fa") <(norm "$fb") | head -n 12 | sed 's/^/    /' || true
		differ=$((differ + 1))
	fi
done
for fb in "$OUTD"/b/*; do
	[ -e "$OUTD/a/$(basename "$fb")" ] && continue
	echo "DIFFERS: $(basename "$fb"): only BUILD_B wrote it"
	differ=$((differ + 1))
done
echo "same_outputs: $files outputs of $(sessions | wc -l) sessions and 2 distributed ones compared, $differ differ"
[ "$differ" -eq 0 ]
