"""calls_deep.py — recursions that need more C stack than the program has
when CPython 3.11 evaluates every Python call in a C call of its own (as it
does while a frame evaluation function is set: --calls there), for
tests/e2e/py_calls.sh; on every version the counting's test of a running
call looks through 200 of the data stack's chunks here.  Plainly 3.11 runs them in one loop and the C stack
stays flat.

  deep:   down(30000) with the recursion limit raised, then down(10):
          down is called 30012 times, 2 of them primitive (3.11 needs
          some 300 bytes of C stack a level with the hook: 8 MiB give out
          near 28,000)
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
        sys.setrecursionlimit(100000)
        print("deep", down(30000))
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
