#!/bin/bash
# py_frames_312 — Python frames on CPython 3.12: scripts of known splits (a
# function 3x another's work), threads, generators, recursion, exceptions, C
# calls back into Python (ctypes' qsort) and a fork child, checked against the
# truth and against cProfile on the same scripts (tests/python/).
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
need_python_jsonschema
py_need 3.12
py_suite
exit 0
