"""py_own.py — what a Python program sees of a profiler in its own process
(issue 31): its tasks, Threads: line and thread names, threading's count,
os.environ's names and LD_PRELOAD, and os.fork() with every warning an error
(CPython 3.12+ warns on a fork from a process with more than one thread:
under -W error, a failing test).  Must read as plainly in every mode."""
import os
import sys
import threading
import time
import warnings


def look():
    tasks = sorted(os.listdir("/proc/self/task"))
    with open("/proc/self/status") as f:
        threads = [l.split()[1] for l in f if l.startswith("Threads:")][0]
    names = []
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return f"tasks={len(tasks)} Threads={threads} names={','.join(sorted(names))}"


def view(tag):
    # A thread just joined stays listed until it ends in the kernel: read
    # until five looks 5 ms apart agree (as hostile.h's print_threads).
    seen, same = look(), 0
    for _ in range(400):
        if same >= 4:
            break
        time.sleep(0.005)
        now = look()
        same = same + 1 if now == seen else 0
        seen = now
    print(f"{tag}: {seen} active={threading.active_count()}", flush=True)


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for i in range(1000):
            x += i * i
    return x


view("start")
print("environ:", " ".join(sorted(os.environ)), flush=True)
print("LD_PRELOAD:", os.environ.get("LD_PRELOAD", "(unset)"), flush=True)
burn(0.2)
warnings.simplefilter("error")
pid = os.fork()
if pid == 0:
    view("child")
    os._exit(0)
_, st = os.waitpid(pid, 0)
print("child status", st, flush=True)
t = threading.Thread(target=burn, args=(0.15,), name="worker")
t.start()
t.join()
view("joined")
burn(0.2)
pid = os.fork()
if pid == 0:
    os._exit(3)
print("second child status", os.waitpid(pid, 0)[1] >> 8, flush=True)
view("end")
