"""many_sites.py SITES STEPS -- kernel launches from SITES distinct Python
lines, STEPS times over, through the simulated CUDA runtime (tests/fakecupti,
found on LD_LIBRARY_PATH): a training loop's few hundred launch stacks a
thread.  tests/e2e/cuda_selftime.sh counts how many of them the CUDA layer
writes in full (once each) under CBN_CUDA_SELFTIME."""
import ctypes
import sys

lib = ctypes.CDLL("libcupti.so.13")


class Kernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("gpu_ns", ctypes.c_uint64),
                ("grid", ctypes.c_int * 3), ("block", ctypes.c_int * 3),
                ("registers", ctypes.c_int), ("static_smem", ctypes.c_int),
                ("dynamic_smem", ctypes.c_int), ("optin", ctypes.c_int)]


def main():
    sites = int(sys.argv[1])
    steps = int(sys.argv[2])
    k = Kernel(b"_Z4tinyPi", 1000, (1, 1, 1), (32, 1, 1), 8, 0, 0, 0)
    if lib.fakecuda_init() != 0:
        sys.exit("many_sites: fakecuda_init failed")
    src = "\n".join("def site%d(lib, k):\n    lib.fakecuda_launch(ctypes.byref(k), 0)\n" % i
                    for i in range(sites))
    g = {"ctypes": ctypes}
    exec(compile(src, "sites.py", "exec"), g)
    fns = [g["site%d" % i] for i in range(sites)]
    for _ in range(steps):
        for f in fns:
            f(lib, k)
    print("many_sites: %d launches" % (sites * steps))


main()
