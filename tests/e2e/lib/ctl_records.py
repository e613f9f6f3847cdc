#!/usr/bin/env python3
# ctl_records.py FILE.cbp... — print the CAPTURE records (cbn_format.h,
# struct cbn_rec_capture) of each session file and of the launcher's side
# file beside it (FILE.cbs, when there is one: the edges the launcher made),
# merged: "= FILE", then in time order one a line "EVENT CAUSE STEP NAME"
# (names of enum cbn_capture_event / _cause).  A minimal reader of its own,
# for tests/e2e/ctl_*.sh.
import os, struct, sys

EVENTS = {1: "open", 2: "close", 3: "mark"}
CAUSES = {1: "start", 2: "api", 3: "schedule", 4: "delay", 5: "duration", 6: "nvtx",
          7: "cuda_profiler", 8: "ctl", 9: "signal", 10: "exit"}
CHUNK = 64 * 1024
CHUNK_MAGIC = 0x4B4E4843
CHUNK_EVENTS = 2
REC_CAPTURE = 9

def records(path, recs):
    data = open(path, "rb").read()
    if data[:8] != b"CBNPROF\0":
        sys.exit("%s: not a session file" % path)
    data_offset, file_size, next_chunk = struct.unpack_from("<QQQ", data, 24)
    end = min(len(data), file_size, next_chunk)
    off = data_offset
    while off + CHUNK <= end:
        magic, kind, _, tid, seq, used = struct.unpack_from("<IHHIIQ", data, off)
        off += CHUNK
        if magic != CHUNK_MAGIC or kind != CHUNK_EVENTS or used > CHUNK - 24:
            continue
        p = off - CHUNK + 24
        stop = p + used
        while p + 8 <= stop:
            rtype, _, size = struct.unpack_from("<HHI", data, p)
            if size < 8 or size % 8 or p + size > stop:
                break
            if rtype == REC_CAPTURE:
                ts, step, rtid, ev, cause, nlen = struct.unpack_from("<QQIHHI", data, p + 8)
                name = data[p + 40:p + 40 + nlen].decode("utf-8", "replace")
                recs.append((ts, EVENTS.get(ev, str(ev)), CAUSES.get(cause, str(cause)), step,
                             name))
            p += size


for path in sys.argv[1:]:
    print("=", path)
    recs = []
    records(path, recs)
    side = path[:-4] + ".cbs" if path.endswith(".cbp") else None
    if side and os.path.exists(side):
        records(side, recs)
    for ts, ev, cause, step, name in sorted(recs):
        print(ev, cause, step, name or "-")
