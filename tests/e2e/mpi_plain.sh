#!/bin/bash
# mpi_plain — distributed runs without mpirun (docs/distributed.md):
#   - torchrun-style: two plain processes with RANK/LOCAL_RANK/WORLD_SIZE, each
#     under `cbottleneck -o DIR --` (launcher rank mode): DIR/rank-00000 and
#     DIR/rank-00001 with one file each whose header says the rank (source 5,
#     world size 2); no report printed: stdout is the program's own, byte for
#     byte, and so is the exit status; rank 0 alone prints one line (how to
#     merge), rank 1 prints nothing;
#   - rank mode without -o: refused with one line, exit status 2 (usage);
#   - garbage in RANK ("1x") is no rank: a normal run with its report;
#   - a rank named only inside the run (`env RANK=1 ... split`, the exec'd
#     image reads it): the agent puts that image's file in DIR/rank-00001;
#   - a rank's children: examples/forkexec as rank 1 in rank mode: the
#     parent, its fork child and the child's exec of split all write into
#     rank-00001, each header saying rank 1 (a fork child inherits the rank);
#   - `cbottleneck ctl PID` reaches a rank whose socket is in its rank
#     directory (ctl_loop made rank 1 by `env RANK=1` inside the run);
#   - libcbottleneck_mpi.so preloaded into programs without libmpi (true,
#     sh -c 'exit 3', split): same output, same status.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split forkexec ctl_loop
DUMP="$CBN_BUILD_DIR/tests/agent/cbpdump"
need_built "$DUMP"
PROG=("$EXAMPLES/split" 0.05)
CLEAN=(env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID -u RANK)

"${CLEAN[@]}" "${PROG[@]}" >"$T/plain.out" 2>"$T/plain.err"
PLAIN_RC=$?

# torchrun-style: both ranks at once, as a launcher would start them.
for r in 0 1; do
	"${CLEAN[@]}" RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
		"$CBN" -o "$T/prof" -- "${PROG[@]}" >"$T/r$r.out" 2>"$T/r$r.err" &
	pids[r]=$!
done
for r in 0 1; do
	wait "${pids[r]}"
	rc=$?
	[ "$rc" = "$PLAIN_RC" ] || fail "rank $r: exit status $rc, the program's is $PLAIN_RC"
	cmp -s "$T/plain.out" "$T/r$r.out" ||
		fail "rank $r: stdout differs from the program's own: $(head -c 300 "$T/r$r.out")"
	files=("$T/prof/rank-0000$r"/*.cbp)
	[ "${#files[@]}" = 1 ] || fail "rank $r: ${#files[@]} files in rank-0000$r ($(ls -R "$T/prof"))"
	"$DUMP" "${files[0]}" >"$T/d$r" || fail "rank $r: damaged file"
	grep -Eq "^rank rank=$r local_rank=$r world_size=2 source=5 host=$(hostname) " "$T/d$r" ||
		fail "rank $r: header $(grep '^rank ' "$T/d$r")"
done
grep -q 'cbottleneck report' "$T/r0.err" || fail "rank 0 does not say how to merge: $(cat "$T/r0.err")"
[ "$(grep -c '^cbottleneck: ' "$T/r0.err")" = 1 ] || fail "rank 0 printed more than one line: $(cat "$T/r0.err")"
grep -q '^cbottleneck: ' "$T/r1.err" && fail "rank 1 printed: $(cat "$T/r1.err")"
ls "$T/prof"/*.cbp >/dev/null 2>&1 && fail "files at the top of a rank-mode session: $(ls "$T/prof")"
note "torchrun-style: rank-00000 and rank-00001, stdout as the program's, rank 0: $(cat "$T/r0.err")"

# Rank mode needs -o.
set +e
"${CLEAN[@]}" RANK=0 WORLD_SIZE=2 "$CBN" -- "${PROG[@]}" >"$T/noo.out" 2>"$T/noo.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "rank mode without -o: exit status $rc, expected 2"
[ "$(wc -l <"$T/noo.err")" = 1 ] && grep -q -- '-o DIR' "$T/noo.err" ||
	fail "rank mode without -o: $(cat "$T/noo.err")"
[ -s "$T/noo.out" ] && fail "rank mode without -o ran the program"

# Garbage is not a rank.
OUTF= ERRF=
set +e
"${CLEAN[@]}" RANK=1x "$CBN" -o "$T/junk" -- "${PROG[@]}" >"$T/junk.out" 2>"$T/junk.err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "RANK=1x: exit status $rc"
grep -q '^split: done' "$T/junk.out" && grep -q 'samples' "$T/junk.err" ||
	fail "RANK=1x: no normal report (on stderr, stdout being a file): $(head -c 300 "$T/junk.err")"
ls -d "$T/junk"/rank-* >/dev/null 2>&1 && fail "RANK=1x made a rank directory"

# A rank named inside the run: the exec'd image's agent places its file.
run_cbn -o "$T/inner" -- "${CLEAN[@]}" RANK=1 WORLD_SIZE=3 "${PROG[@]}"
expect_rc 0
files=("$T/inner/rank-00001"/*.cbp)
[ "${#files[@]}" = 1 ] && [ -e "${files[0]}" ] || fail "no file in rank-00001: $(ls -R "$T/inner")"
"$DUMP" "${files[0]}" >"$T/inner.d" || fail "inner rank: damaged file"
grep -Eq '^rank rank=1 local_rank=-1 world_size=3 source=5 ' "$T/inner.d" ||
	fail "inner rank: $(grep '^rank ' "$T/inner.d")"
grep -Eq '^exe path=.*/split$' "$T/inner.d" || fail "inner rank: $(grep '^exe' "$T/inner.d")"

# A rank's process tree stays in its directory.
set +e
"${CLEAN[@]}" RANK=1 WORLD_SIZE=2 "$CBN" -o "$T/tree" -- "$EXAMPLES/forkexec" 0.05 \
	>"$T/tree.out" 2>"$T/tree.err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "forkexec as rank 1: exit status $rc: $(cat "$T/tree.err")"
ls "$T/tree"/*.cbp >/dev/null 2>&1 && fail "forkexec as rank 1: files at the top: $(ls "$T/tree")"
n=0
exes=""
for f in "$T/tree/rank-00001"/*.cbp; do
	"$DUMP" "$f" >"$T/tree.d" || fail "forkexec as rank 1: damaged $f"
	grep -Eq '^rank rank=1 local_rank=-1 world_size=2 source=5 ' "$T/tree.d" ||
		fail "forkexec as rank 1: $f says $(grep '^rank ' "$T/tree.d")"
	exes="$exes $(sed -n 's|^exe path=.*/||p' "$T/tree.d")"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "forkexec as rank 1: $n files ($exes), expected the parent, its fork child and split"
case "$exes" in *split*) ;; *) fail "forkexec as rank 1: no file of split ($exes)" ;; esac
note "forkexec as rank 1: $n files in rank-00001 ($exes), all rank 1"

# ctl finds a rank's control socket in its rank directory.
CBN_CTL=1 "$CBN" -q -o "$T/ctl" -- "${CLEAN[@]}" RANK=1 WORLD_SIZE=2 "$EXAMPLES/ctl_loop" 30 \
	>"$T/ctl.out" 2>"$T/ctl.err" &
bg=$!
ok=
for _ in $(seq 1 400); do
	pid=$(pgrep -n -f "$EXAMPLES/ctl_loop 30" || true)
	if [ -n "$pid" ] && [ -S "$T/ctl/rank-00001/ctl/$pid.sock" ]; then
		set +e
		"$CBN" ctl "$pid" status >"$T/ctl.status" 2>&1
		rc=$?
		set -e
		ok=$rc
		break
	fi
	sleep 0.05
done
kill "$bg" 2>/dev/null || true
wait "$bg" 2>/dev/null || true
[ "$ok" = 0 ] || fail "ctl status of a rank: exit ${ok:-none (no socket in rank-00001/ctl)}: $(cat "$T/ctl.status" 2>/dev/null)"
grep -q "file=$T/ctl/rank-00001/" "$T/ctl.status" || fail "ctl status of a rank: $(cat "$T/ctl.status")"
note "ctl reached rank 1: $(cat "$T/ctl.status")"

# The MPI wrappers where there is no libmpi: inert.
MPILIB="$CBN_BUILD_DIR/lib/libcbottleneck_mpi.so"
if [ -e "$MPILIB" ]; then
	set +e
	LD_PRELOAD="$MPILIB" true
	rc1=$?
	LD_PRELOAD="$MPILIB" sh -c 'exit 3'
	rc2=$?
	LD_PRELOAD="$MPILIB" "${CLEAN[@]}" "${PROG[@]}" >"$T/pre.out" 2>"$T/pre.err"
	rc3=$?
	set -e
	[ "$rc1:$rc2:$rc3" = "0:3:$PLAIN_RC" ] || fail "with the MPI wrappers: statuses $rc1:$rc2:$rc3"
	cmp -s "$T/plain.out" "$T/pre.out" || fail "with the MPI wrappers: stdout differs"
	[ -s "$T/pre.err" ] && fail "with the MPI wrappers: stderr $(cat "$T/pre.err")"
	note "libcbottleneck_mpi.so without libmpi: true 0, sh 3, split $PLAIN_RC, output unchanged"
else
	note "libcbottleneck_mpi.so not built (no Open MPI): its no-libmpi check skipped"
fi
exit 0
