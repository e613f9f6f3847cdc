"""calls_fork.py: calls made in processes that end by os._exit or by a
signal (tests/e2e/py_calls.sh).  Two multiprocessing children (fork) call
work 1,000 times each and end as multiprocessing ends them, by os._exit
after clearing their atexit callbacks; a pool of two (closed and joined, so
its workers end the same way) calls it 500 times; a pool in a `with` block,
which ends its workers by SIGTERM, 400 times; a child that kills itself
with SIGKILL 100 times (killed, once); the parent 300 times: work 3,300
calls in all, and as many of the builtin abs."""
import multiprocessing as mp
import os
import signal


def work(x):
    return abs(x) * x + 1


def child(n):
    total = 0
    for i in range(n):
        total += work(i)
    print("child", total)


def killed(n):
    total = 0
    for i in range(n):
        total += work(i)
    print("killed", total, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    mp.set_start_method("fork")
    ps = [mp.Process(target=child, args=(1000,)) for _ in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    pool = mp.Pool(2)
    print("pool", sum(pool.map(work, range(500), chunksize=50)))
    pool.close()
    pool.join()
    with mp.Pool(2) as pool:
        print("with pool", sum(pool.map(work, range(400), chunksize=20)))
    p = mp.Process(target=killed, args=(100,))
    p.start()
    p.join()
    print("killed child's exit code", p.exitcode)
    print("parent", sum(work(i) for i in range(300)))
