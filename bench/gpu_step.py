#!/usr/bin/env python3
"""gpu_step.py -- a PyTorch training loop that times its own steps, for
bench/gpu_step.sh (run plainly and under cbottleneck in one invocation).

torchvision's ResNet-18 (or a transformer block with --model block), batch 64
of 3x64x64 images, SGD, cudnn.benchmark off so every run launches the same
kernels.  Prints one line:

  gpu_step: model resnet18 steps 20 median_ms 9.812 mean_ms 9.9 kernels K cuda_us T

--profile also runs the timed steps inside torch.profiler (CPU and CUDA
activities) and reports the kernels torch.profiler saw (K) and their time
(T); without it K and T are -1.  --selfprof runs torch.profiler over a
window in the middle of the loop only (schedule wait/warmup/active), as a
program that profiles itself does, and reports what it saw there.
"""
import argparse
import statistics
import time

import torch


def build(kind):
    if kind == "resnet18":
        import torchvision

        model = torchvision.models.resnet18(num_classes=10)
        x = torch.randn(64, 3, 64, 64)
        y = torch.randint(0, 10, (64,))
        return model, x, y
    # one transformer encoder block: attention, layer norms, MLP
    model = torch.nn.Sequential(
        torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                         batch_first=True),
        torch.nn.Flatten(), torch.nn.Linear(512 * 64, 10))
    x = torch.randn(32, 64, 512)
    y = torch.randint(0, 10, (32,))
    return model, x, y


def cuda_events(prof):
    from torch.autograd import DeviceType

    n, us = 0, 0.0
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            n += 1
            us += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    return n, us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18", choices=["resnet18", "block"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--selfprof", action="store_true")
    a = ap.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    model, x, y = build(a.model)
    model = model.to(dev)
    x, y = x.to(dev), y.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()

    times = []
    kernels, cuda_us = -1, -1.0
    if a.selfprof:
        from torch.profiler import ProfilerActivity, profile, schedule

        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=acts, schedule=schedule(wait=3, warmup=2, active=a.steps - 8,
                                                        repeat=1)) as prof:
            for _ in range(a.steps):
                t0 = time.perf_counter()
                step()
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
                prof.step()
        kernels, cuda_us = cuda_events(prof)
    elif a.profile:
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=acts) as prof:
            for _ in range(a.steps):
                t0 = time.perf_counter()
                step()
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
        kernels, cuda_us = cuda_events(prof)
    else:
        for _ in range(a.steps):
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    print("gpu_step: model %s steps %d median_ms %.3f mean_ms %.3f kernels %d cuda_us %.1f"
          % (a.model, a.steps, statistics.median(times), statistics.mean(times), kernels,
             cuda_us), flush=True)


if __name__ == "__main__":
    main()
