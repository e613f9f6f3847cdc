"""A Python loop LEVELS calls deep through C, like nested nn.Module calls.

    python3 python_depth.py LEVELS ITERS

Each level is an object called as a function (its type's __call__ slot: the
interpreter goes through C, _PyObject_MakeTpCall -> slot_tp_call -> a new
_PyEval_EvalFrameDefault, about 7 native frames), which calls its forward()
(a Python call, inlined by the interpreter).  ITERS calls of the outermost;
prints the process's CPU seconds (time.process_time) at the end.
"""
import sys
import time


def leaf(x):
    s = 0
    for i in range(300):
        s += i ^ x
    return s


class Layer:
    def __init__(self, inner):
        self.inner = inner

    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return self.inner(x) + 1 if self.inner is not None else leaf(x)


def main():
    levels, iters = int(sys.argv[1]), int(sys.argv[2])
    model = None
    for _ in range(levels):
        model = Layer(model)
    for i in range(iters):
        model(i)
    print("%.6f" % time.process_time())


main()
