"""calls_peers.py — a small program with known call counts, run beside the
real tools a program may run under (coverage.py, pdb) with --calls
(tests/e2e/py_calls.sh): fib(15) is 1973 calls, 1 primitive; tick runs
2000 times in each of two threads."""
import threading


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def tick(x):
    return x + 1


def ticker():
    for i in range(2000):
        tick(i)


def main():
    print("fib:", fib(15))
    threads = [threading.Thread(target=ticker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("peers: done")


if __name__ == "__main__":
    main()
