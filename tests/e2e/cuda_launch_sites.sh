#!/bin/bash
# cuda_launch_sites — launch sites must name the user's code even when the
# launch goes through what nvcc generates: kernelE<<<>>>(p) calls the host
# wrapper _Z7kernelEPf (named like the kernel), which calls
# __device_stub__Z7kernelEPf, which calls __cudaLaunchKernel.  The simulated
# workload reproduces that chain (tests/cuda/workload.c, wl_nvcc);
# the site must be launch_e_like_nvcc at its call line, not a generated frame.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn --json "$T/r.json" -- "$W" nvcc
expect_rc 0
line=$(grep -n '^	_Z7kernelEPf(NULL);' "$CBN_SOURCE_DIR/tests/cuda/workload.c" | cut -d: -f1)
python3 - "$T/r.json" "$line" <<'PY' || fail "launch site of an nvcc-shaped launch is a generated frame, not the caller"
import json, sys
d = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
sites = d["cuda"]["launch_sites"]
e = [s for s in sites if s["gpu_ns"] == 7 * 40000 and s["launches"] == 7]
print("# kernelE sites: %s" % e, file=sys.stderr)
ok = len(e) == 1 and e[0]["function"] == "launch_e_like_nvcc" and e[0]["line"] == line
ok = ok and not any("__device_stub__" in s["function"] for s in sites)
k = [r for r in d["cuda"]["kernels"] if r["name"] == "kernelE(float*)"]
ok = ok and len(k) == 1 and k[0]["instances"] == 7 and k[0]["total_ns"] == 7 * 40000
sys.exit(0 if ok else 1)
PY
