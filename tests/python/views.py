"""Python programs for tests/e2e/py_views.sh: Python frames in the stacks
other than CPU samples.

    python3 views.py memory    grow() keeps 200 blocks of 1 MiB; churn() frees
                               64 KiB blocks as it goes
    python3 views.py offcpu    waiter() sleeps 0.3 s; lock_wait(), in a thread,
                               blocks on a lock held meanwhile
"""
import sys
import threading
import time


def grow():
    keep = []
    for _ in range(200):
        keep.append(bytearray(1 << 20))
    return keep


def churn():
    for _ in range(2000):
        bytes(64 * 1024)


def memory():
    kept = grow()
    churn()
    return len(kept)


def waiter():
    time.sleep(0.3)


def lock_wait(lock):
    with lock:
        pass


def offcpu():
    lock = threading.Lock()
    lock.acquire()
    t = threading.Thread(target=lock_wait, args=(lock,))
    t.start()
    waiter()
    lock.release()
    t.join()


if __name__ == "__main__":
    globals()[sys.argv[1]]()
    print(sys.argv[1] + ": done")
