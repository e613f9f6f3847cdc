"""A small PyTorch CPU training loop that times its own steps, for
bench/deep_stacks.sh.

    python3 torch_train.py [STEPS [THREADS]]      (defaults: 40, torch's own)

A small CNN (two 3x3 convolutions, 8 and 16 channels, with batch norm, then two linear layers)
on batch 32 of 3x32x32 random images, cross-entropy, SGD with momentum: a
loop whose steps spend most of their time inside ATen's kernels, not in
dispatch (bench/torch_mlp.py is the dispatch-bound one).  After 5 warm-up
steps, times STEPS steps (time.perf_counter) and prints, as its last line,
the median step in ms.
"""
import statistics
import sys
import time

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    if len(sys.argv) > 2:
        torch.set_num_threads(int(sys.argv[2]))
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 32, 32)
    y = torch.randint(0, 10, (32,))

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(5):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    print("%.3f" % (statistics.median(times) * 1e3))


main()
