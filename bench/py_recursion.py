"""A pure-Python recursion DEPTH frames deep doing a fixed amount of work,
for bench/deep_stacks.sh.

    python3 py_recursion.py [ITERS [DEPTH]]      (defaults: 150, 100)

Each iteration calls down DEPTH Python frames (plain Python-to-Python calls,
which CPython 3.11 and later run in one native interpreter frame) and spins
a fixed loop at the bottom, so nearly every sample sees the whole depth.
Prints, as its last line, the median CPU time of one iteration in ms
(time.process_time: the process's CPU, so a sampling handler's time on the
thread and any profiler thread in the process are counted, and other load
on the machine is not).
"""
import statistics
import sys
import time

WORK = 200000


def leaf():
    s = 0
    for i in range(WORK):
        s += i & 7
    return s


def down(n):
    if n <= 1:
        return leaf()
    return down(n - 1) + 1


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    if depth + 50 > sys.getrecursionlimit():
        sys.setrecursionlimit(depth + 50)
    down(depth)  # warm up: the first call specializes the bytecode
    times = []
    for _ in range(iters):
        t0 = time.process_time()
        down(depth)
        times.append(time.process_time() - t0)
    print("%.4f" % (statistics.median(times) * 1e3))


main()
