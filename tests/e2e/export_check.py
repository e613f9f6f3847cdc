#!/usr/bin/env python3
# export_check.py — structural checks of the files --trace, --folded,
# --flamegraph and --pprof write, for the export_*.sh end-to-end tests.
#   export_check.py trace FILE [--window START_US:END_US] [--names a,b] [--flows N]
#   export_check.py folded FILE [--names a,b] [--total N]
#   export_check.py svg FILE [--names a,b]
#   export_check.py pprof FILE
# Prints "ok ..." facts on stdout and exits 0, or prints what is wrong on
# stderr and exits 1.
import argparse, gzip, json, re, sys
import xml.etree.ElementTree as ET

errors = []


def bad(msg):
    errors.append(msg)


def opener(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def check_trace(a):
    if a.file.endswith(".gz"):
        with open(a.file, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                bad("%s ends in .gz but is not gzip" % a.file)
    with opener(a.file) as f:
        d = json.loads(f.read().decode("utf-8"))
    evs = d.get("traceEvents")
    if not isinstance(evs, list):
        bad("no traceEvents list")
        return
    if d.get("displayTimeUnit") != "ns":
        bad("displayTimeUnit is %r" % d.get("displayTimeUnit"))
    meta = {}
    lanes = {}
    last_ts = {}
    counters = {}
    for e in evs:
        for k in ("ph", "pid"):
            if k not in e:
                bad("event without %s: %r" % (k, e))
        ph = e.get("ph")
        if ph == "M":
            meta[(e["name"], e["pid"], e.get("tid"))] = e.get("args", {})
            continue
        key = (e["pid"], e["tid"])
        ts = round(e["ts"] * 1000)
        if ts < last_ts.get(key, -1):
            bad("lane %r goes back in time at %r" % (key, e))
        last_ts[key] = ts
        if ph == "C":
            # counter tracks (memory): numeric args, in time order per track
            args = e.get("args")
            if not e.get("name") or not isinstance(args, dict) or not args or \
                    not all(isinstance(v, (int, float)) for v in args.values()):
                bad("counter event without a name or numeric args: %r" % e)
            counters.setdefault((e["pid"], e.get("name")), []).append((ts, args))
        if ph in ("X", "i"):
            dur = round(e.get("dur", 0) * 1000)
            if dur < 0:
                bad("negative dur: %r" % e)
            lanes.setdefault(key, []).append((ts, ts + dur, e))
    # strict nesting per lane (Perfetto)
    for key, sl in lanes.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s, t, e in sl:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and t > stack[-1]:
                bad("lane %r: %s [%d,%d] overlaps its parent ending %d" % (key, e.get("name"), s, t, stack[-1]))
            stack.append(t)
        if ("thread_name", key[0], key[1]) not in meta:
            bad("lane %r has no thread_name" % (key,))
        if ("process_name", key[0], None) not in meta:
            bad("process %r has no process_name" % key[0])
    names = {e.get("name") for e in evs if e.get("cat") == "cpu_sample"}
    for n in filter(None, (a.names or "").split(",")):
        if n not in names:
            bad("no cpu_sample slice named %s" % n)
    for n in filter(None, (a.counters or "").split(",")):
        if not any(name == n for (_, name) in counters):
            bad("no counter track named %s" % n)
    if a.window:
        lo, hi = (float(x) * 1000 for x in a.window.split(":"))
        for (pid, name), pts in counters.items():
            if any(t < lo or t > hi for t, _ in pts):
                bad("counter %s of pid %r has points outside the window" % (name, pid))
        for sl in lanes.values():
            for s, t, e in sl:
                if s < lo or t > hi:
                    bad("%s [%d,%d] outside the window" % (e.get("name"), s, t))
                    break
    # flows: one s and one f per id, s inside a CUDA API slice, f on a GPU op;
    # lock flows start inside an off-CPU slice
    def enclosing(key, ts, cats):
        for s, t, e in lanes.get(key, []):
            if s <= ts <= t and t > s and any(e.get("cat", "").startswith(c) for c in cats):
                return e
        return None
    starts = [e for e in evs if e.get("ph") == "s"]
    finishes = {}
    for e in evs:
        if e.get("ph") == "f":
            finishes.setdefault(e["id"], []).append(e)
    for s in starts:
        fs = finishes.get(s["id"], [])
        if len(fs) != 1:
            bad("flow %r has %d ends" % (s["id"], len(fs)))
            continue
        f = fs[0]
        if s.get("cat") == "lock":
            # a lock wait: from the waiter's off-CPU slice to the holder's lane
            if f.get("bp") != "e" or f.get("cat") != "lock":
                bad("lock flow %r is malformed" % s["id"])
            if not enclosing((s["pid"], s["tid"]), round(s["ts"] * 1000), ("off_cpu",)):
                bad("lock flow start %r is not inside an off-CPU slice" % s["id"])
            continue
        if f.get("bp") != "e" or s.get("cat") != "ac2g" or f.get("cat") != "ac2g":
            bad("flow %r is not kineto's ac2g form" % s["id"])
        if not enclosing((s["pid"], s["tid"]), round(s["ts"] * 1000), ("cuda_",)):
            bad("flow start %r is not inside a CUDA API slice" % s["id"])
        if not enclosing((f["pid"], f["tid"]), round(f["ts"] * 1000), ("kernel", "gpu_mem")):
            bad("flow end %r is not on a GPU op" % s["id"])
    if a.flows is not None and len(starts) < a.flows:
        bad("%d flows, expected at least %d" % (len(starts), a.flows))
    thread_names = sorted({v.get("name") for (k, p, t), v in meta.items() if k == "thread_name"})
    process_names = sorted({v.get("name") for (k, p, t), v in meta.items() if k == "process_name"})
    print("ok lanes=%d events=%d flows=%d counters=%d" % (len(lanes), len(evs), len(starts), len(counters)))
    print("threads=%s" % json.dumps(thread_names))
    print("processes=%s" % json.dumps(process_names))
    od = d.get("otherData", {})
    print("dropped=%s" % od.get("cpu_slices_dropped"))


def check_folded(a):
    total = 0
    seen = set()
    frames = set()
    with opener(a.file) as f:
        for n, line in enumerate(f.read().decode("utf-8", "replace").splitlines(), 1):
            m = re.fullmatch(r"(\S+) (\d+)", line)
            if not m:
                bad("line %d is not 'a;b;c COUNT': %r" % (n, line))
                continue
            if m.group(1) in seen:
                bad("stack repeated on line %d" % n)
            seen.add(m.group(1))
            frames.update(m.group(1).split(";"))
            total += int(m.group(2))
    for n in filter(None, (a.names or "").split(",")):
        if n not in frames:
            bad("no frame named %s" % n)
    if a.total is not None and total != a.total:
        bad("counts sum to %d, expected %d" % (total, a.total))
    print("ok stacks=%d total=%d" % (len(seen), total))


def check_svg(a):
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(a.file).getroot()
    if root.tag != ns + "svg":
        bad("root element is %s" % root.tag)
    script = root.find(ns + "script")
    if script is None or "function zoom" not in (script.text or ""):
        bad("no embedded script with zoom")
    widths = {}
    for g in root.iter(ns + "g"):
        if g.get("class") != "f":
            continue
        t = g.find(ns + "title").text
        name = t[:t.rindex(" (")]
        widths[name] = widths.get(name, 0) + float(g.find(ns + "rect").get("width"))
    for n in filter(None, (a.names or "").split(",")):
        if n not in widths:
            bad("no frame named %s" % n)
    print("ok frames=%d" % len(widths))
    print("widths=%s" % json.dumps(widths))


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def check_pprof(a):
    with open(a.file, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            bad("not gzip")
            return
    b = gzip.open(a.file).read()
    i, strings, counts = 0, [], {}
    while i < len(b):
        key, i = varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if field == 6:
                strings.append(b[i:i + n].decode("utf-8", "replace"))
            i += n
        else:
            bad("unexpected wire type %d" % wt)
            return
        counts[field] = counts.get(field, 0) + 1
    if not strings or strings[0] != "":
        bad("string_table[0] is not empty")
    for want in ("samples", "count", "cpu", "nanoseconds"):
        if want not in strings:
            bad("string table lacks %s" % want)
    print("ok samples=%d locations=%d functions=%d strings=%d" %
          (counts.get(2, 0), counts.get(4, 0), counts.get(5, 0), len(strings)))


p = argparse.ArgumentParser()
p.add_argument("kind", choices=("trace", "folded", "svg", "pprof"))
p.add_argument("file")
p.add_argument("--window")
p.add_argument("--names")
p.add_argument("--counters", help="counter track names that must be there, comma-separated")
p.add_argument("--flows", type=int)
p.add_argument("--total", type=int)
a = p.parse_args()
try:
    {"trace": check_trace, "folded": check_folded, "svg": check_svg, "pprof": check_pprof}[a.kind](a)
except Exception as e:  # a file that does not even parse
    bad("%s: %s: %s" % (a.file, type(e).__name__, e))
for e in errors[:20]:
    print("export_check %s: %s" % (a.kind, e), file=sys.stderr)
sys.exit(1 if errors else 0)
