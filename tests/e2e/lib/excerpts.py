#!/usr/bin/env python3
"""excerpts.py REFERENCE_DIR DOC... — the report excerpts of the docs have
the shape the current binary prints (tests/e2e/docs_commands.sh).

REFERENCE_DIR holds text reports of real runs (*.txt; *-v.txt were run with
-v).  A doc's excerpt is a fenced block without a language (or "text") that
holds a line of the report (its header, a table's title).  In it:
  - a line "  Label:  ..." of the header, or "Label: ..." of the views, must
    be one the binary prints (the -v labels only in an excerpt that shows the
    environment block, as -v does);
  - the header of a run (from "cbottleneck: CPU sampling profile" to the
    first blank line) has 12 lines at most, unless the excerpt is of -v;
  - a row of the cProfile-style table has "-" in both percall columns,
    unless its ncalls is an exact count (--calls: then both are numbers, and
    the excerpt says "counted exactly");
  - a table's column line whose first two words the binary prints as a
    column line must be that line (spaces aside);
  - "(N more X; use --limit)" says the share left out, as the tables do
    (operators' rows nest: a count only);
  - no line of the report says "CPU verdict:", "Note: sampling mode" or
    "addresses without line information left out" (gone from the binary).
Prints each mismatch as FILE:LINE and exits 1 when there is one."""
import os, re, sys

MARKERS = ("cbottleneck: CPU sampling profile", "ncalls  tottime", "CPU overview",
           "Hottest source lines", "Off-CPU: where threads waited", "Programs (CPU",
           "Allocation sites, host", "Memory: host", "Steps: ", "Step time: ")
LABEL = re.compile(r"^( {0,4})([A-Z][A-Za-z/ -]{1,24}):(?: |$)")
GONE = ("CPU verdict:", "Note: sampling mode", "addresses without line information left out")
RUN_LABELS = ("Data quality",)
ROW = re.compile(r"^\s*\d+\s+[\d.]+\s+(\S+)\s+[\d.]+\s+(\S+)\s+\S")


def words(l):
    return " ".join(l.split())


def load(refdir):
    labels, vlabels, cols = set(), set(), {}
    for f in sorted(os.listdir(refdir)):
        if not f.endswith(".txt"):
            continue
        verbose = f.endswith("-v.txt")
        for l in open(os.path.join(refdir, f), errors="replace").read().split("\n"):
            m = LABEL.match(l)
            if m:
                (vlabels if verbose else labels).add((len(m.group(1)) > 0, m.group(2)))
            w = l.split()
            if len(w) >= 3 and not re.search(r"\d", l) and not LABEL.match(l):
                cols.setdefault(" ".join(w[:2]), set()).add(words(l))
    # printed by what the run met, not by -v: "Data quality: no problems
    # found" is its one line when nothing was wrong, a section title when
    # something was (on a loaded machine every run may have a note), so a
    # clean -v run shows the binary prints it without -v too
    for lab in RUN_LABELS:
        if (False, lab) in vlabels:
            labels.add((False, lab))
    return labels, vlabels | labels, cols


def blocks(path):
    """(first line number, lines) of each fenced block without a language
    (or "text") that holds a line of the report."""
    lines, out, i = open(path).read().split("\n"), [], 0
    while i < len(lines):
        m = re.match(r"^[ \t]*```([\w-]*)[ \t]*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r"^[ \t]*```[ \t]*$", lines[j]):
            j += 1
        block = lines[i + 1:j]
        if m.group(1) in ("", "text") and any(k in l for l in block for k in MARKERS):
            out.append((i + 2, block))
        i = j + 1
    return out


def check(path, labels, vlabels, cols):
    bad = []
    for first, block in blocks(path):
        verbose = any(l.strip() == "Environment" for l in block)
        counted = any("counted exactly" in l for l in block)
        known = vlabels if verbose else labels
        head, inhead = 0, False
        for n, l in enumerate(block):
            where = "%s:%d" % (os.path.relpath(path), first + n)
            if l.startswith("cbottleneck: CPU sampling profile"):
                inhead, head = True, 0
            if inhead:
                if not l.strip():
                    inhead = False
                    if head > 12 and not verbose:
                        bad.append("%s: a header of %d lines (the binary prints 12 at most)" %
                                   (where, head))
                else:
                    head += 1
            for g in GONE:
                if g in l:
                    bad.append("%s: \"%s\" is no longer printed: %s" % (where, g, l.strip()))
            lm = LABEL.match(l)
            if lm and (len(lm.group(1)) > 0, lm.group(2)) not in known and \
                    any(lab == lm.group(2) for _, lab in vlabels | labels):
                bad.append("%s: the binary prints no \"%s:\" line %s: %s" %
                           (where, lm.group(2), "there" if verbose else "without -v", l.strip()))
            r = ROW.match(l)
            if r and not counted and (r.group(1) != "-" or r.group(2) != "-"):
                bad.append("%s: percall is \"-\" in the binary (ncalls counts samples): %s" %
                           (where, l.strip()))
            w = l.split()
            if len(w) >= 3 and not re.search(r"\d", l) and " ".join(w[:2]) in cols and \
                    words(l) not in cols[" ".join(w[:2])]:
                bad.append("%s: the binary's columns are \"%s\": %s" %
                           (where, sorted(cols[" ".join(w[:2])])[0], l.strip()))
            mm = re.search(r"\(\d+ more ([a-zA-Z ]+); use --limit\)", l)
            if mm and mm.group(1) not in ("operators", "rows"):
                bad.append("%s: the binary says the share of the %s left out: %s" %
                           (where, mm.group(1), l.strip()))
    return bad


def main():
    labels, vlabels, cols = load(sys.argv[1])
    bad = []
    for p in sys.argv[2:]:
        bad += check(p, labels, vlabels, cols)
    for b in bad:
        print(b, file=sys.stderr)
    print("%d mismatches in the excerpts" % len(bad), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
