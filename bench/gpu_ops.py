#!/usr/bin/env python3
"""gpu_ops.py -- the real-GPU check of cbottleneck's operator table against
torch.profiler's key_averages() on one PyTorch training loop (issue 23 item 7).

Needs only Python and PyTorch on a machine with a GPU; bench/gpu_ops.sh runs the
three steps:

  gpu_ops.py torch OUT.json   the loop under torch.profiler: its key_averages()
                              rows (CUDA total and self, per operator) and, per
                              operator, the runtime calls inside it that launched
                              GPU work, written to OUT.json
  gpu_ops.py run              the same loop, the measured steps between
                              cudaProfilerStart/Stop (torch.cuda.profiler), for
                              cbottleneck --capture-range cudaProfilerApi
  gpu_ops.py compare TORCH.json CBN.json
                              the check: every operator torch.profiler gave GPU
                              time has a row in cbottleneck's "operators" with the
                              same launches and a CUDA total (and self CUDA)
                              within --tol (1 %); exit 1 when one is not

The loop: a small CNN (conv2d, batch_norm, relu, adaptive_avg_pool2d, linear),
cross-entropy, backward, SGD with momentum, fixed inputs on the GPU, WARMUP
steps first (cuDNN's and cuBLAS's first calls), then STEPS measured steps, each
ending in a synchronisation so that both profilers see whole steps.
"""
import argparse
import json
import sys

STEPS = 20
WARMUP = 5


def build(torch):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
    return step


def measured(torch, step, steps):
    for _ in range(steps):
        step()


def ancestors(evt):
    """Names of the operators around a profiler event, once each."""
    seen, p = [], evt.cpu_parent
    while p is not None:
        if p.name not in seen:
            seen.append(p.name)
        p = p.cpu_parent
    return seen


def attr(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return 0


def run_torch(out, steps, warmup):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step = build(torch)
    for _ in range(warmup):
        step()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        measured(torch, step, steps)
    rows = {}
    for a in prof.key_averages():
        if str(getattr(a, "device_type", "CPU")).split(".")[-1] != "CPU":
            continue   # kernels, copies: device rows
        rows[a.key] = {
            # microseconds in torch; nanoseconds here as in cbottleneck's JSON
            "cuda_total_ns": 1000.0 * attr(a, "device_time_total", "cuda_time_total"),
            "self_cuda_ns": 1000.0 * attr(a, "self_device_time_total", "self_cuda_time_total"),
            "count": a.count, "launches": 0}
    # launches: runtime or driver calls that launched GPU work (a kernel,
    # copy or set correlated to them), counted for every operator around them.
    # torch attaches the GPU ops to the runtime call that launched them; should
    # a version attach them to the operator itself, each counts as a launch
    # of that operator.
    kernels = 0
    for e in prof.events():
        k = len(getattr(e, "kernels", []) or [])
        if not k:
            continue
        kernels += k
        api = e.name.startswith(("cuda", "cu")) and not e.name.startswith("cutlass")
        names = ancestors(e) if api else [e.name] + ancestors(e)
        for name in names:
            if name in rows:
                rows[name]["launches"] += 1 if api else k
    json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
               "steps": steps, "kernels": kernels, "rows": rows}, open(out, "w"), indent=1)
    print("gpu_ops: torch.profiler: %d rows, %d GPU ops in %d steps -> %s" %
          (len(rows), kernels, steps, out))


def run_plain(steps, warmup):
    import torch
    step = build(torch)
    for _ in range(warmup):
        step()
    torch.cuda.profiler.start()   # cudaProfilerStart: cbottleneck --capture-range cudaProfilerApi
    measured(torch, step, steps)
    torch.cuda.profiler.stop()


def is_operator(name):
    """torch.profiler rows cbottleneck's rules name the same way."""
    return (name.startswith("aten::") or name.endswith("Backward0") or
            name.endswith("Backward1") or name.startswith("torch::autograd::"))


def compare(torch_path, cbn_path, tol, out=sys.stdout):
    t = json.load(open(torch_path))
    c = json.load(open(cbn_path))
    ops = {r["name"]: r for r in c.get("operators", {}).get("rows", [])}
    bad, lines = [], []
    want = sorted((n for n, r in t["rows"].items() if is_operator(n) and r["cuda_total_ns"] > 0),
                  key=lambda n: -t["rows"][n]["cuda_total_ns"])

    def rel(a, b):
        return abs(a - b) / b if b else (0.0 if not a else float("inf"))
    lines.append("%-44s %12s %12s %7s %12s %12s %7s %9s  %s" %
                 ("operator", "torch CUDA", "cbn CUDA", "diff", "torch self", "cbn self",
                  "diff", "launches", "verdict"))
    for n in want:
        tr, cr = t["rows"][n], ops.get(n)
        if cr is None:
            bad.append(n)
            lines.append("%-44s %12.1f %12s %7s %12.1f %12s %7s %9s  MISSING in cbottleneck" %
                         (n[:44], tr["cuda_total_ns"] / 1e3, "-", "-", tr["self_cuda_ns"] / 1e3,
                          "-", "-", "%d/-" % tr["launches"]))
            continue
        d_tot = rel(cr["cuda_total_ns"], tr["cuda_total_ns"])
        d_self = rel(cr["self_cuda_ns"], tr["self_cuda_ns"])
        ok = d_tot <= tol and d_self <= tol and cr["launches"] == tr["launches"]
        if not ok:
            bad.append(n)
        lines.append("%-44s %12.1f %12.1f %6.2f%% %12.1f %12.1f %6.2f%% %9s  %s" %
                     (n[:44], tr["cuda_total_ns"] / 1e3, cr["cuda_total_ns"] / 1e3, 100 * d_tot,
                      tr["self_cuda_ns"] / 1e3, cr["self_cuda_ns"] / 1e3, 100 * d_self,
                      "%d/%d" % (tr["launches"], cr["launches"]), "ok" if ok else "DIFFERS"))
    extra = sorted(n for n, r in ops.items() if r["cuda_total_ns"] > 0 and n not in t["rows"])
    gpu_c = c.get("cuda", {}).get("totals", {})
    print("gpu_ops: %s, torch %s; %d steps; torch.profiler saw %d GPU ops, cbottleneck %d "
          "kernels + %d copies + %d sets" %
          (t.get("device", "?"), t.get("torch", "?"), t.get("steps", 0), t.get("kernels", 0),
           gpu_c.get("kernels", 0), gpu_c.get("memcpy", 0), gpu_c.get("memset", 0)), file=out)
    print("  (CUDA times in us; launches torch/cbottleneck; tolerance %.1f %%)" % (100 * tol),
          file=out)
    for l in lines:
        print(l, file=out)
    if extra:
        print("operators with GPU time only cbottleneck has: %s" % ", ".join(extra), file=out)
    print("gpu_ops: %d of %d operators agree%s" %
          (len(want) - len(bad), len(want), "" if not bad else "; differing: " + ", ".join(bad)),
          file=out)
    return 1 if bad or not want else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["torch", "run", "compare"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--warmup", type=int, default=WARMUP)
    ap.add_argument("--tol", type=float, default=0.01, help="relative tolerance of CUDA times")
    a = ap.parse_args()
    if a.mode == "torch":
        if len(a.files) != 1:
            ap.error("torch needs OUT.json")
        run_torch(a.files[0], a.steps, a.warmup)
        return 0
    if a.mode == "run":
        run_plain(a.steps, a.warmup)
        return 0
    if len(a.files) != 2:
        ap.error("compare needs TORCH.json CBN.json")
    return compare(a.files[0], a.files[1], a.tol)


if __name__ == "__main__":
    sys.exit(main())
