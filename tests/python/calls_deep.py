"""calls_deep.py — recursions that need more C stack than the program has
when CPython 3.11 evaluates every Python call in a C call of its own (as it
does while a frame evaluation function is set: --calls there), for
tests/e2e/py_calls.sh.  Plainly 3.11 runs them in one loop and the C stack
stays flat.

  deep:   down(100000) with the recursion limit raised, then down(10):
          down is called 100012 times, 2 of them primitive
  thread: down(3000) in a thread with a 256 KiB stack, then down(10) in
          the main thread
Prints the results and "calls_deep: done"."""
import sys
import threading


def down(n):
    return 0 if n == 0 else down(n - 1) + 1


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "deep"
    if mode == "deep":
        sys.setrecursionlimit(250000)
        print("deep", down(100000))
    else:
        sys.setrecursionlimit(10000)
        threading.stack_size(256 * 1024)
        out = []
        t = threading.Thread(target=lambda: out.append(down(3000)))
        t.start()
        t.join()
        print("thread", out[0])
    print("then", down(10))
    print("calls_deep: done")


main()
