"""A training-like loop for --step-func (tests/e2e/steps_func.sh): 12
iterations, each sleeping 20 ms and then calling process_batch(), which
burns 15 ms of CPU time (45 ms in iteration 5): the sleep is outside the
function, so each call is one step and the 6th is three times the others.
Usage: steps_loop.py [SCALE]."""
import sys
import time


def process_batch(cpu_s):
    end = time.thread_time() + cpu_s
    s = 0
    while time.thread_time() < end:
        for i in range(2000):
            s += i * i % 7
    return s


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    for it in range(12):
        time.sleep(0.02)
        process_batch(0.015 * scale * (3 if it == 5 else 1))
    print("steps_loop: 12 calls, done")


if __name__ == "__main__":
    main()
