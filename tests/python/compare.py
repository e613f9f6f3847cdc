"""Check a cbottleneck --json report of tests/python/workloads.py against the
scenario's known split and, where given, against cProfile's numbers for the
same scenario (python3 -m cProfile -o FILE).  Exits 1 with one line per
problem; prints what it compared.

    compare.py SCENARIO REPORT.json [FOLDED|-] [PSTATS|-] [TRUTH]

TRUTH: what the script measured of its own parts (workloads.py writes it
where WORKLOADS_TRUTH says), the truth of the run profiled.
"""
import json
import os
import pstats
import sys

scenario, report = sys.argv[1], sys.argv[2]
folded = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None
prof = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
truth = sys.argv[5] if len(sys.argv) > 5 else None
d = json.load(open(report))
problems = []


def say(msg):
    print("# " + msg, file=sys.stderr)


def bad(msg):
    problems.append(msg)


py = [f for f in d["functions"] if f.get("python")]
cpu = d["run"]["cpu_ns"] or 1
# The CPU the scenario itself took (workloads.py's process clock around it,
# WORKLOADS_TRUTH): the checks of "nearly all of it" are made against this,
# not the run's CPU, whose share of interpreter start-up a loaded machine
# grows (consume held 0.75 of the run's CPU at load 8, 0.9 when quiet).
spent = json.load(open(truth)) if truth and os.path.exists(truth) else {}
work = spent["work"] * 1e9 if spent.get("work") else cpu


def ours(name):
    rows = [f for f in py if f["name"] == name or f["name"].endswith("." + name)]
    if not rows:
        bad("no Python function %s in the report (Python functions: %s)"
            % (name, ", ".join(sorted({f["name"] for f in py})[:20])))
        return {"self_ns": 0, "total_ns": 0, "file": "", "line": 0}
    return rows[0]


def ratio_ok(what, num, den, want, tol):
    r = num / den if den else float("inf")
    say("%s: %.3f (want %.2f +-%d %%)" % (what, r, want, round(tol * 100)))
    if abs(r - want) > want * tol:
        bad("%s is %.3f, expected %.2f +-%d %%" % (what, r, want, round(tol * 100)))


# cProfile, by (file, first line) as both name functions
cp = {}
if prof:
    st = pstats.Stats(prof)
    for (fn, line, name), (cc, nc, tt, ct, callers) in st.stats.items():
        if fn != "~":
            cp[(fn, line)] = {"name": name, "tottime": tt, "cumtime": ct, "ncalls": nc}
    cp_total = sum(v["tottime"] for v in cp.values()) + sum(
        tt for (fn, _, _), (_, _, tt, _, _) in st.stats.items() if fn == "~")


def cprof(row):
    return cp.get((row["file"], row["line"]))


if d["run"]["python"]["state"] != "on":
    bad("run.python.state is %r, expected on" % d["run"]["python"]["state"])

if scenario == "split":
    # 3x the work: 3x the CPU +-20 %, or, where the run measured what each
    # call took (WORKLOADS_TRUTH), that ratio +-15 % (load moves the CPU a
    # loop takes: 2.4x to 3.6x seen at load 7)
    ra, rb = ours("three_units"), ours("one_unit")
    if truth and os.path.exists(truth):
        t = json.load(open(truth))
        want = t["three_units"] / t["one_unit"] if t["one_unit"] else 3.0
        say("measured CPU three_units/one_unit in the profiled run: %.3f" % want)
        ratio_ok("cbottleneck cumtime three_units/one_unit against it",
                 ra["total_ns"], rb["total_ns"], want, 0.15)
        if not 2.4 <= want <= 3.6:
            # the comparison above is with what the machine gave: still judged
            say("the machine gave three_units %.2fx one_unit's CPU (3x nominal): loaded" % want)
    else:
        ratio_ok("cbottleneck cumtime three_units/one_unit", ra["total_ns"], rb["total_ns"],
                 3.0, 0.2)
    if prof:
        ca, cb = cprof(ra), cprof(rb)
        if not ca or not cb:
            bad("cProfile has no row for three_units or one_unit at the same file:line")
        else:
            # its own run, timed by its wall clock, and its own share of
            # the machine: what a loaded host gave it, told, not judged
            # (2.38 seen at load 7; 1.93 at load 2.7 in a CI run, where
            # ours read 2.975 of the profiled run's measured 2.978)
            r = ca["cumtime"] / cb["cumtime"] if cb["cumtime"] else float("inf")
            say("cProfile cumtime three_units/one_unit: %.3f (3x nominal%s)"
                % (r, "" if abs(r - 3.0) <= 3.0 * 0.35 else "; its run was loaded"))
    # the loop itself is spin's own time: folded interpreter frames included
    s = ours("spin")
    say("spin self share of the scenario's CPU: %.3f" % (s["self_ns"] / work))
    if s["self_ns"] < 0.7 * work:
        bad("spin's tottime is %.2f of the scenario's CPU, expected nearly all of it"
            % (s["self_ns"] / work))
elif scenario == "threads":
    # each thread's function holds its thread's CPU (the kernel's count at
    # thread end): the split is whatever the machine gave each loop, which
    # load moves (2x the work read 1.35x the CPU in one CI-like run at load 8)
    th = sorted((t for t in d["threads"] if t.get("measured_cpu_ns")),
                key=lambda t: t["measured_cpu_ns"])
    h, l = ours("thread_heavy"), ours("thread_light")
    if len(th) < 3:
        bad("expected 3 threads with a measured CPU time, got %d" % len(th))
    else:
        # the two workers are the busiest threads; heavy did twice the work
        light_t, heavy_t = th[-2], th[-1]
        if heavy_t["measured_cpu_ns"] < light_t["measured_cpu_ns"]:
            light_t, heavy_t = heavy_t, light_t
        ratio_ok("thread_heavy cumtime / its thread's measured CPU", h["total_ns"],
                 heavy_t["measured_cpu_ns"], 1.0, 0.15)
        ratio_ok("thread_light cumtime / its thread's measured CPU", l["total_ns"],
                 light_t["measured_cpu_ns"], 1.0, 0.15)
    say("cumtime thread_heavy/thread_light: %.3f (2x the work)"
        % (h["total_ns"] / max(l["total_ns"], 1)))
    if not h["total_ns"] > l["total_ns"]:
        bad("thread_heavy (2x the work) has less time than thread_light")
elif scenario == "generators":
    g, c = ours("gen_values"), ours("consume")
    say("gen_values self %.3f, consume total %.3f of the scenario's CPU"
        % (g["self_ns"] / work, c["total_ns"] / work))
    if g["total_ns"] > c["total_ns"]:
        bad("gen_values' cumtime exceeds its consumer's")
    if g["self_ns"] < 0.2 * work or c["total_ns"] < 0.8 * work:
        bad("the generator's work is not under consume")
    if prof:
        cg, cc = cprof(g), cprof(c)
        if not cg or not cc:
            bad("cProfile has no row for gen_values or consume at the same file:line")
        else:
            # cProfile charges its own cost of each resume (a call event)
            # to the consumer: its share of the generator reads 20-40 % low
            ratio_ok("cbottleneck/cProfile share of gen_values in consume",
                     g["total_ns"] / c["total_ns"], cg["cumtime"] / cc["cumtime"], 1.2, 0.3)
elif scenario == "recursion":
    f, r = ours("fib"), ours("recurse_root")
    ratio_ok("cumtime fib/recurse_root", f["total_ns"], r["total_ns"], 1.0, 0.05)
    if f["total_ns"] > cpu * 1.001:
        bad("fib's cumtime %d exceeds the run's CPU %d: recursion counted twice"
            % (f["total_ns"], cpu))
    if d["run"]["python"]["truncated"]:
        bad("%d stacks had their Python frames cut" % d["run"]["python"]["truncated"])
elif scenario == "exceptions":
    r, c = ours("raise_and_catch"), ours("check")
    say("raise_and_catch total %.3f, check total %.3f of the scenario's CPU"
        % (r["total_ns"] / work, c["total_ns"] / work))
    if r["total_ns"] < 0.8 * work or c["total_ns"] <= 0 or c["total_ns"] >= r["total_ns"]:
        bad("check must be inside raise_and_catch, which holds nearly all the CPU")
elif scenario == "cext":
    c = ours("cmp_keys")
    say("cmp_keys total %.3f of the scenario's CPU" % (c["total_ns"] / work))
    if c["total_ns"] < 0.25 * work:
        bad("the Python callback cmp_keys has only %.2f of the scenario's CPU"
            % (c["total_ns"] / work))
    # interleaved: by_qsort (Python) -> qsort (libc, C) -> cmp_keys (Python).
    # A sample whose leaf is in libffi's closure code, between the C sort
    # and the callback's evaluation loop, can have the callback's Python
    # frame without its C activation and then pairs at the root (seen in 1
    # of ~550 samples): a few such samples are allowed, and shown.
    seen = wrong = weight = 0
    first_wrong = ""
    for line in open(folded):
        stack, w = line.rsplit(" ", 1)
        frames = stack.split(";")
        if "cmp_keys" not in frames:
            continue
        weight += int(w)
        q = [i for i, f in enumerate(frames) if f.startswith("qsort") or f.startswith("msort")]
        b = frames.index("by_qsort") if "by_qsort" in frames else -1
        k = frames.index("cmp_keys")
        if not q or b < 0 or not (b < q[0] < k):
            wrong += int(w)
            first_wrong = first_wrong or stack[:300]
            continue
        seen += 1
    say("%d folded stacks through the C sort back into Python; %d of %d samples not "
        "interleaved" % (seen, wrong, weight))
    if wrong * 50 > weight:
        bad("stack not interleaved by_qsort < qsort < cmp_keys (%d of %d samples): %s"
            % (wrong, weight, first_wrong))
    if not seen:
        bad("no stack holds cmp_keys")
elif scenario == "stdlib":
    # the top Python functions by tottime agree with cProfile's
    top = sorted(py, key=lambda f: -f["self_ns"])
    ourkeys = [(f["file"], f["line"]) for f in top[:12]]
    say("ours: " + ", ".join("%s %.1f%%" % (f["name"], 100.0 * f["self_ns"] / cpu) for f in top[:6]))
    if prof:
        cps = sorted(cp.items(), key=lambda kv: -kv[1]["tottime"])
        say("cProfile: " + ", ".join("%s %.1f%%" % (v["name"], 100.0 * v["tottime"] / cp_total)
                                    for k, v in cps[:6]))
        for k, v in cps[:4]:
            # a function with a few samples may rank anywhere: only the
            # ones cProfile gives 3 % or more
            if v["tottime"] >= 0.03 * cp_total and k not in ourkeys:
                bad("cProfile's top function %s (%s:%d) is not in cbottleneck's top 12"
                    % (v["name"], os.path.basename(k[0]), k[1]))
        if cps and (cps[0][0] not in ourkeys[:3]):
            bad("cProfile's first function %s is not in cbottleneck's top 3" % cps[0][1]["name"])
elif scenario == "forked":
    for name in ("parent_work", "child_work"):
        ours(name)
else:
    bad("unknown scenario " + scenario)

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
