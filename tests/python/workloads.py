"""Python programs of known shape for the Python-frame tests (tests/e2e/py_*.sh).

    python3 workloads.py SCENARIO [SCALE]

Each scenario runs about SCALE seconds of CPU on a 2-core VM (default 0.4)
and prints one line "SCENARIO: done".  The functions' split of work is the
truth the tests check, against cbottleneck's samples and against cProfile:

  split       one_unit() does N units, three_units() 3N of the same loop
  threads     two threads: thread_light() 1 part, thread_heavy() 2 parts
  generators  gen_values() (a generator) does the work, consume() iterates it
  recursion   fib() recursive, under recurse_root()
  exceptions  raise_and_catch(): raises and handles in a loop, plus check()
  cext        by_qsort() sorts through libc's qsort (ctypes) with a Python
              comparison, cmp_keys(), called back from C
  stdlib      difflib, fractions and textwrap doing real work
  forked      os.fork(): the child runs child_work(), the parent parent_work()
"""
import json
import os
import sys
import threading
import time

SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.4
UNIT = int(3000000 * SCALE)     # loop iterations of about 0.1 s of CPU at SCALE 1


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


# --- split -------------------------------------------------------------------
def one_unit():
    return spin(UNIT)


def three_units():
    return spin(UNIT) + spin(UNIT) + spin(UNIT)


def split():
    # the CPU each took (this thread's clock), for the tests: nominally 1:3,
    # but what a loaded machine gives each call varies (WORKLOADS_TRUTH)
    spent = {"one_unit": 0.0, "three_units": 0.0}
    for _ in range(2):
        for fn in (one_unit, three_units):
            t0 = time.thread_time()
            fn()
            spent[fn.__name__] += time.thread_time() - t0
    if os.environ.get("WORKLOADS_TRUTH"):
        with open(os.environ["WORKLOADS_TRUTH"], "w") as f:
            json.dump(spent, f)


# --- threads -----------------------------------------------------------------
def thread_light():
    for _ in range(2):
        spin(UNIT)


def thread_heavy():
    for _ in range(4):
        spin(UNIT)


def threads():
    # one after the other: no GIL contention blurs the split
    for fn in (thread_light, thread_heavy):
        t = threading.Thread(target=fn, name=fn.__name__)
        t.start()
        t.join()


# --- generators --------------------------------------------------------------
def gen_values(n):
    for i in range(n):
        yield i * i % 7


def consume():
    total = 0
    for v in gen_values(UNIT * 4):
        total += v
    return total


def generators():
    consume()


# --- recursion ---------------------------------------------------------------
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recurse_root():
    n = 18
    while fib(n) < UNIT // 3:
        n += 1
    return fib(n)


def recursion():
    recurse_root()


# --- exceptions --------------------------------------------------------------
def check(i):
    if i % 3 == 0:
        raise ValueError(i)
    return i


def raise_and_catch():
    caught = 0
    for i in range(UNIT * 3 // 2):
        try:
            check(i)
        except ValueError:
            caught += 1
    return caught


def exceptions():
    raise_and_catch()


# --- C extension calls -------------------------------------------------------
def cmp_keys(a, b):
    x, y = a[0], b[0]
    # some work per comparison, so that the callback is where time goes
    s = 0
    for i in range(20):
        s += i
    return (x > y) - (x < y)


def by_qsort():
    import ctypes
    import ctypes.util
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                           ctypes.POINTER(ctypes.c_int))
    cb = CMP(cmp_keys)
    n = max(200, int(UNIT / 150))
    for rep in range(5):
        arr = (ctypes.c_int * n)(*[(i * 7919 + rep) % n for i in range(n)])
        libc.qsort(arr, n, ctypes.sizeof(ctypes.c_int), cb)


def cext():
    by_qsort()


# --- the standard library ----------------------------------------------------
def stdlib():
    import difflib
    import fractions
    import textwrap
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    a = [" ".join(words[(i * j) % 8] for j in range(12)) for i in range(int(300 * SCALE) + 30)]
    b = [line if i % 5 else line.upper() for i, line in enumerate(a)]
    list(difflib.unified_diff(a, b, lineterm=""))
    difflib.SequenceMatcher(None, " ".join(a), " ".join(b)).ratio()
    f = fractions.Fraction(0)
    for i in range(1, int(3000 * SCALE) + 100):
        f += fractions.Fraction(1, i % 97 + 1)
    text = " ".join(a)
    for w in range(20, 20 + int(60 * SCALE) + 5):
        textwrap.fill(text, width=w)


# --- fork ----------------------------------------------------------------------
def parent_work():
    spin(UNIT * 2)


def child_work():
    spin(UNIT * 2)


def forked():
    import os
    spin(UNIT // 4)
    pid = os.fork()
    if pid == 0:
        child_work()
        os._exit(0)
    parent_work()
    os.waitpid(pid, 0)


if __name__ == "__main__":
    name = sys.argv[1]
    t0 = time.process_time()
    globals()[name]()
    if os.environ.get("WORKLOADS_TRUTH"):
        # the CPU the scenario took, start-up left out (compare.py's "work")
        path = os.environ["WORKLOADS_TRUTH"]
        spent = json.load(open(path)) if os.path.exists(path) else {}
        spent["work"] = time.process_time() - t0
        with open(path, "w") as f:
            json.dump(spent, f)
    print(name + ": done")
