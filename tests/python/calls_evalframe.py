"""calls_evalframe.py — a program that sets the interpreter's frame
evaluation function itself (PEP 523), as a JIT or a debugger's frame
evaluation mode does: here back to the interpreter's own, through ctypes,
between two runs of tiny(), for tests/e2e/py_calls.sh.  CPython 3.11 only
(where --calls counts through that function).  Prints "evalframe: done"."""
import ctypes


def tiny(x):
    return x + 1


def loop(n):
    s = 0
    for _ in range(n):
        s = tiny(s)
    return s


api = ctypes.pythonapi
api.PyInterpreterState_Get.restype = ctypes.c_void_p
api._PyInterpreterState_SetEvalFrameFunc.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
api._PyInterpreterState_SetEvalFrameFunc.restype = None
loop(1000)
default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p)
api._PyInterpreterState_SetEvalFrameFunc(api.PyInterpreterState_Get(), default)
loop(1000)
print("evalframe: done")
