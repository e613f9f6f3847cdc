#!/usr/bin/env python3
"""mem_peak.py REPORT.json — print the peak bytes of the first host space of a
cbottleneck JSON report (bench/memory.sh); NaN when it has none."""
import json
import sys

r = json.load(open(sys.argv[1]))
for s in (r.get("memory") or {}).get("spaces", []):
    if s.get("kind") == "host":
        print(s["peak_bytes"])
        break
else:
    print("NaN")
