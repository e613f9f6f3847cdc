"""calls_fork.py: calls made in processes that end by os._exit (tests/e2e/py_calls.sh).
Two multiprocessing children (fork) call work 1,000 times each and end as
multiprocessing ends them, by os._exit after clearing their atexit
callbacks; a pool of two (closed and joined, so its workers end the same
way) calls it 500 times; the parent 300 times: work 2,800 calls in all."""
import multiprocessing as mp


def work(x):
    return x * x + 1


def child(n):
    total = 0
    for i in range(n):
        total += work(i)
    print("child", total)


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
    print("parent", sum(work(i) for i in range(300)))
