"""calls_tools.py — a program that uses the interpreter's own profiling
and debugging hooks while --calls counts (tests/e2e/py_calls.sh): a profile
function (sys.setprofile), a trace function (sys.settrace, as a debugger),
cProfile, and on 3.12+ a sys.monitoring tool of its own (coverage's id).
Each sees tiny() called 1000 times; the output is the same plainly and
under --calls (the counting takes none of their events), and tiny() is
called 4000 times in all."""
import sys


def tiny(x):
    return x + 1


def run(n):
    for i in range(n):
        tiny(i)


def with_setprofile():
    seen = [0]

    def prof(frame, event, arg):
        if event == "call" and frame.f_code is tiny.__code__:
            seen[0] += 1

    sys.setprofile(prof)
    run(1000)
    sys.setprofile(None)
    return seen[0]


def with_settrace():
    seen = {"call": 0, "line": 0, "return": 0}

    def local(frame, event, arg):
        seen[event] = seen.get(event, 0) + 1
        return local

    def glob(frame, event, arg):
        if frame.f_code is tiny.__code__:
            seen["call"] += 1
            return local
        return None

    sys.settrace(glob)
    run(1000)
    sys.settrace(None)
    return seen


def with_cprofile():
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.runcall(run, 1000)
    return [v[1] for k, v in pstats.Stats(pr).stats.items() if k[2] == "tiny"]


def with_monitoring():
    m = getattr(sys, "monitoring", None)
    if m is None:
        return "no sys.monitoring"
    seen = [0]

    def start(code, offset):
        if code is tiny.__code__:
            seen[0] += 1

    m.use_tool_id(m.COVERAGE_ID, "tools")
    m.register_callback(m.COVERAGE_ID, m.events.PY_START, start)
    m.set_events(m.COVERAGE_ID, m.events.PY_START)
    run(1000)
    m.set_events(m.COVERAGE_ID, 0)
    m.register_callback(m.COVERAGE_ID, m.events.PY_START, None)
    m.free_tool_id(m.COVERAGE_ID)
    return seen[0]


print("setprofile:", with_setprofile())
print("settrace:", with_settrace())
print("cProfile:", with_cprofile())
print("monitoring:", with_monitoring())
print("profile after:", sys.getprofile(), "trace after:", sys.gettrace())
