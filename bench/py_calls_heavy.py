"""A call-heavy script (bench/python_calls.sh): 3,000,000 calls of a
one-line function, then fib(25).  Prints the CPU seconds of that part.
Usage: py_calls_heavy.py [CALLS] (the one-line function's calls)."""
import sys
import time


def f(x):
    return x + 1


def g(n):
    s = 0
    for _ in range(n):
        s = f(s)
    return s


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


t = time.process_time()
g(int(sys.argv[1]) if len(sys.argv) > 1 else 3000000)
fib(25)
print("%.4f" % (time.process_time() - t))
