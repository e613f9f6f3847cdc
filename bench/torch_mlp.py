#!/usr/bin/env python3
"""torch_mlp.py -- a dispatch-bound PyTorch CPU training loop that times its
own steps, for bench/memory_loop.sh and bench/deep_stacks.sh (run plainly
and under profilers in one invocation).

A tiny MLP (64-128-128-10), batch 8, AdamW: each step is some fifty small
operators whose cost is the framework's dispatch, the Python calls and the
allocator (some 750 allocations and 430 KB a step), not arithmetic: 0.48 ms a
step with Debian's python3-torch 1.13 on the 2-CPU EPYC VM of
docs/performance.md, as the host side of a launch-bound GPU step is.  Prints
two lines, the second the median alone (deep_stacks.sh reads the last line):

  torch_mlp: steps N median_ms M mean_ms A
  M

Usage: torch_mlp.py [STEPS [THREADS]] [--warmup W]   (STEPS 2000, W 200;
THREADS: torch.set_num_threads, else torch's own)
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int, nargs="?", default=2000)
    ap.add_argument("threads", type=int, nargs="?")
    ap.add_argument("--warmup", type=int, default=200)
    a = ap.parse_args()

    torch.manual_seed(0)
    if a.threads:
        torch.set_num_threads(a.threads)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(8, 64)
    y = torch.randint(0, 10, (8,))

    times = []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if i >= a.warmup:
            times.append((t1 - t0) * 1e3)
    med = statistics.median(times)
    print("torch_mlp: steps %d median_ms %.4f mean_ms %.4f"
          % (a.steps, med, statistics.fmean(times)))
    print("%.4f" % med, flush=True)


if __name__ == "__main__":
    main()
