"""Run a Python script under cProfile with CPU time as its clock.

    python3 cprofile_cpu.py STATS_FILE SCRIPT [ARGS...]

`python -m cProfile` times with time.perf_counter, wall-clock time: on a
loaded machine a function that waited for the CPU reads longer.  cbottleneck
samples CPU time, so the tests compare it with cProfile on the same clock,
time.process_time.
"""
import cProfile
import runpy
import sys
import time

out, script = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
prof = cProfile.Profile(time.process_time)
try:
    prof.runcall(runpy.run_path, script, run_name="__main__")
finally:
    prof.dump_stats(out)
