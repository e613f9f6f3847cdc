#!/usr/bin/env python3
"""torch_cnn.py -- a small CNN trained on random data, on the CPU (docs/symbols.md,
"Code without unwind information").  Two conv2d + batch norm + max pool, two
linear layers, SGD: oneDNN generates the convolutions' kernels at run time (JIT
code without unwind information), so a sampler must unwind through them to
keep the convolutions' time under aten::convolution.

  torch_cnn.py [--seconds S] [--threads N] [--profile OUT.json]

--profile runs the loop under torch.profiler (CPU activities) and writes the
self CPU time of each aten:: operator from key_averages() as JSON
{"aten::mm": microseconds, ...}: the peer's figures for the same run.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc1 = nn.Linear(32 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def train(seconds):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 3, 32, 32)
    y = torch.randint(0, 10, (32,))
    steps = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end or steps < 3:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        steps += 1
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    train(0.3)                     # oneDNN compiles its kernels once
    if not a.profile:
        print("torch_cnn: %d steps" % train(a.seconds))
        return
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        steps = train(a.seconds)
    ops = {}
    for e in prof.key_averages():
        if e.key.startswith("aten::"):
            ops[e.key] = ops.get(e.key, 0) + e.self_cpu_time_total
    with open(a.profile, "w") as f:
        json.dump(ops, f)
    print("torch_cnn: %d steps" % steps)


if __name__ == "__main__":
    main()
