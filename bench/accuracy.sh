#!/usr/bin/env bash
# accuracy.sh — how close cbottleneck's CPU profile is to `perf record` on real
# Debian programs.  For each program the SAME workload runs RUNS times under
# `perf record -F FREQ -g` (with -N: no copies into ~/.debug) and RUNS times under
# `cbottleneck -F FREQ --inline fold --python native --json FILE` (separate
# runs, the two tools interleaved so drift hits them alike; --python native:
# the interpreter's own frames stay the leaf, as perf sees them).  Then, per program, it prints each
# tool's top functions by self share side by side with their sample counts, and
# three figures per run pair and for all runs pooled:
#   top-1    the same function is first in both lists (yes/no)
#   overlap  how many of the 5 names are in both top-5 lists
#   sumdiff  sum over cbottleneck's top-5 names of |cbn share - perf share of
#            the same name| in percentage points (0 share where a tool lacks it)
# Targets: same top-1, overlap >= 4, sumdiff <= 10 pp.  With RUNS >= 2 it also
# prints the same figures for each tool against itself (run i vs run j): the
# noise floor of this machine, below which a cbn-vs-perf difference means nothing.
#
# What is compared: self (exclusive) shares of USER-SPACE samples of every
# process of the command.  perf: `perf report --no-children --sort dso,sym -g
# none` over the whole run, `[k]` rows dropped and shares renormalized to the
# user samples (shares weighted by sample period, as perf's Overhead is).
# cbottleneck: `functions[].self_samples` of the JSON report, the `[kernel]` row
# dropped and shares renormalized.  Each side's kernel share is printed apart.
# Names: perf's symbol versions (`@@GLIBC_2.2.5`) are cut, blanks ignored, and
# C++ names compared without their parameter lists (perf prints none:
# `ira_init` against cbottleneck's `ira_init()`).  Two names that are one symbol
# of the same module (one address in its .dynsym/.symtab or its
# /usr/lib/debug/.build-id file, e.g. glibc's __memcpy_avx512_unaligned_erms and
# __memmove_avx512_unaligned_erms) count as one function, and the output says so.
# perf prints code without a symbol as a file offset (`[.] 0x1fd01d`);
# cbottleneck names it `module+0xSTART` by the start of its function in the
# unwind tables.  So each such perf row is mapped to the virtual address of
# that offset, then to the .eh_frame FDE that covers it, and renamed
# `module+0xSTART`: the two name the same function.  A perf address that no
# FDE covers keeps its address, is marked `(no FDE)` and is not comparable.
#
# Programs (Debian's binaries, absolute paths; each workload ~1-3 s here):
#   python  /usr/bin/python3 running a pure-Python loop
#   perl    /usr/bin/perl running a loop with a hash, strings and a regex
#   bzip2   /usr/bin/bzip2 -9 over 16 MB of generated text
#   xz      /usr/bin/xz -6 -T1 over 2 MB of the same text
#   sqlite  /usr/bin/sqlite3 -bail :memory: < generated SQL (250k INSERTs into
#           a table with two indexes, then GROUP BY / ORDER BY / self-join)
#   sort    /usr/bin/sort --parallel=2 -S 200M over a 48 MB generated file
#   make    /usr/bin/make -B -j2 building 20 generated C files with gcc -O2
#           and linking them (make, gcc, cc1, as, collect2, ld processes)
# A program that is not installed is skipped with the reason.
# Not part of ctest.  Usage: bench/accuracy.sh [BUILD_DIR]   (default: build)
# Env: RUNS (2), FREQ (999), ROWS (8: rows of the side-by-side table),
#      PROGS ("python perl bzip2 xz sqlite sort make"), PERF (/usr/bin/perf),
#      KEEP=DIR to keep the perf.data files, perf reports and JSON reports.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-2}
FREQ=${FREQ:-999}
ROWS=${ROWS:-8}
PROGS=${PROGS:-"python perl bzip2 xz sqlite sort make"}
PERF=${PERF:-/usr/bin/perf}
PY=/usr/bin/python3     # not `python3`: that may be a pyenv shim script
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-accuracy.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "accuracy.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
[ -x "$PY" ] || die "$PY is missing: it makes the inputs and compares the profiles (apt-get install python3)"
[ -x "$PERF" ] || die "no perf at $PERF (apt-get install linux-perf, or set PERF=)"
command -v readelf >/dev/null || die "readelf is missing (apt-get install binutils)"
"$PERF" record -q -g -F "$FREQ" -o "$TMP/probe.data" -- true >/dev/null 2>"$TMP/perf.err" ||
	die "perf record failed: $(head -n 1 "$TMP/perf.err") (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?))"
case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a whole number >= 1" ;; esac
case $TMP in *[[:space:]]*) die "temporary directory '$TMP' has blanks; set TMPDIR" ;; esac
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP" || die "cannot create KEEP=$KEEP"
	KEEP=$(cd "$KEEP" && pwd)
fi

# ---- inputs ---------------------------------------------------------------
make_text() { # FILE BYTES: lines of 12 words from a 4000-word vocabulary
	"$PY" - "$1" "$2" <<'EOF'
import random, sys
random.seed(7)
words = [''.join(random.choice('abcdefghijklmnop') for _ in range(random.randint(2, 9))) for _ in range(4000)]
with open(sys.argv[1], 'w') as f:
    n, size = 0, int(sys.argv[2])
    while n < size:
        line = ' '.join(random.choice(words) for _ in range(12)) + '\n'
        f.write(line); n += len(line)
EOF
}

declare -A CMD STDIN   # STDIN: the program's standard input (default /dev/null)
for p in $PROGS; do
	case $p in
	python)
		[ -x /usr/bin/python3 ] || { echo "skip python: /usr/bin/python3 missing"; continue; }
		cat >"$TMP/loop.py" <<'EOF'
def work(n):
    d = {}
    s = 0
    words = ["alpha", "beta", "gamma", "delta"]
    for i in range(n):
        k = i % 1000
        d[k] = d.get(k, 0) + i
        s += (i * i) % 7
        if i % 5 == 0:
            s += len(words[i % 4] + str(k))
    return s, len(d)
print(work(10_000_000))
EOF
		CMD[$p]="/usr/bin/python3 $TMP/loop.py" ;;
	perl)
		[ -x /usr/bin/perl ] || { echo "skip perl: /usr/bin/perl missing"; continue; }
		cat >"$TMP/loop.pl" <<'EOF'
my %d; my $s = 0; my @w = qw(alpha beta gamma delta);
for my $i (0 .. 8_000_000) {
    my $k = $i % 1000;
    $d{$k} += $i;
    $s += ($i * $i) % 7;
    if ($i % 5 == 0) { my $t = $w[$i % 4] . $k; $s += length($t); $s++ if $t =~ /a\d+7$/; }
}
print "$s ", scalar(keys %d), "\n";
EOF
		CMD[$p]="/usr/bin/perl $TMP/loop.pl" ;;
	bzip2)
		[ -x /usr/bin/bzip2 ] || { echo "skip bzip2: /usr/bin/bzip2 missing (apt-get install bzip2)"; continue; }
		[ -e "$TMP/text16" ] || make_text "$TMP/text16" 16000000
		CMD[$p]="/usr/bin/bzip2 -9 -c $TMP/text16" ;;
	xz)
		[ -x /usr/bin/xz ] || { echo "skip xz: /usr/bin/xz missing (apt-get install xz-utils)"; continue; }
		make_text "$TMP/text2" 2000000
		CMD[$p]="/usr/bin/xz -6 -T1 -c $TMP/text2" ;;
	sqlite)
		[ -x /usr/bin/sqlite3 ] || { echo "skip sqlite: /usr/bin/sqlite3 missing (apt-get install sqlite3)"; continue; }
		"$PY" - "$TMP/work.sql" <<'EOF'
import random, sys
random.seed(11)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(3, 10))) for _ in range(5000)]
with open(sys.argv[1], 'w') as f:
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL);\n")
    f.write("CREATE INDEX t_k ON t(k);\nCREATE INDEX t_name ON t(name);\nBEGIN;\n")
    for i in range(250000):
        f.write("INSERT INTO t(k, name, v) VALUES(%d, '%s', %.3f);\n"
                % (random.randint(0, 99999), random.choice(words), random.random() * 1000))
    f.write("COMMIT;\n")
    f.write("SELECT k % 97, count(*), sum(v), max(name) FROM t GROUP BY k % 97 ORDER BY 3 DESC LIMIT 5;\n")
    f.write("SELECT name, count(*), avg(v) FROM t GROUP BY name ORDER BY 2 DESC, 1 LIMIT 5;\n")
    f.write("SELECT count(*) FROM t a JOIN t b ON a.k = b.k WHERE a.id < b.id;\n")
EOF
		CMD[$p]="/usr/bin/sqlite3 -bail :memory:"
		STDIN[$p]="$TMP/work.sql" ;;
	sort)
		[ -x /usr/bin/sort ] || { echo "skip sort: /usr/bin/sort missing"; continue; }
		"$PY" - "$TMP/sort.txt" <<'EOF'
import random, sys
random.seed(5)
with open(sys.argv[1], 'w') as f:
    for i in range(1_500_000):
        f.write('%08x %s %d\n' % (random.getrandbits(32),
                ''.join(random.choice('abcdefghij') for _ in range(12)), random.randint(0, 10**9)))
EOF
		CMD[$p]="/usr/bin/sort --parallel=2 -S 200M -o /dev/null $TMP/sort.txt" ;;
	make)
		[ -x /usr/bin/make ] || { echo "skip make: /usr/bin/make missing (apt-get install make)"; continue; }
		[ -x /usr/bin/gcc ] || { echo "skip make: /usr/bin/gcc missing (apt-get install gcc)"; continue; }
		mkdir -p "$TMP/mk"
		"$PY" - "$TMP/mk" <<'EOF'
import os, random, sys
random.seed(3)
d, n_files = sys.argv[1], 20
fn = '''
struct s%(n)d_%(j)d { int a[16]; double d; char name[32]; };
static int cmp%(n)d_%(j)d(const void *x, const void *y) { return ((const struct s%(n)d_%(j)d *)x)->a[%(k)d] - ((const struct s%(n)d_%(j)d *)y)->a[%(k)d]; }
double fn%(n)d_%(j)d(struct s%(n)d_%(j)d *v, int len, const char *tag)
{
	double acc = 0;
	for (int i = 0; i < len; i++) {
		for (int t = 0; t < 16; t++)
			acc += v[i].a[t] * (t + %(k)d) / (v[i].d + 1.0);
		switch (v[i].a[0] %% 5) {
		case 0: acc *= 1.5; break;
		case 1: snprintf(v[i].name, sizeof v[i].name, "%%s-%%d", tag, i); break;
		case 2: acc -= strlen(v[i].name); break;
		case 3: v[i].d = acc / (i + 1); break;
		default: acc += %(k)d;
		}
	}
	qsort(v, len, sizeof *v, cmp%(n)d_%(j)d);
	return acc;
}
'''
for n in range(n_files):
    with open(os.path.join(d, 'f%02d.c' % n), 'w') as f:
        f.write('#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n')
        for j in range(4):
            f.write(fn % dict(n=n, j=j, k=random.randint(0, 15)))
with open(os.path.join(d, 'main.c'), 'w') as f:
    f.write('int main(void) { return 0; }\n')
with open(os.path.join(d, 'Makefile'), 'w') as f:
    objs = ' '.join('f%02d.o' % n for n in range(n_files))
    f.write('OBJS = %s main.o\nprog: $(OBJS)\n\t/usr/bin/gcc -o $@ $(OBJS)\n'
            '%%.o: %%.c\n\t/usr/bin/gcc -O2 -c -o $@ $<\n' % objs)
EOF
		CMD[$p]="/usr/bin/make -s -B -j2 -C $TMP/mk" ;;
	*) die "unknown program '$p' (known: python perl bzip2 xz sqlite sort make)" ;;
	esac
done

# ---- the comparison (one program at a time) ---------------------------------
cat >"$TMP/compare.py" <<'EOF'
import bisect, json, os, re, subprocess, sys

prog, cmd, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
tmp, rows = sys.argv[4], int(sys.argv[5])
TOP = 5

# ---- names ------------------------------------------------------------------
def noparams(n):
    """C++ name without its parameter list: perf prints `ira_init`, cbottleneck `ira_init()`."""
    n = n.strip()
    clone = ''
    m = re.search(r'\s*(\[clone [^\]]*\])+$', n)
    if m:
        n, clone = n[:m.start()], m.group(0).strip()
    while True:
        m = re.search(r'\s*(const|volatile|&&|&|noexcept)$', n)
        if not m or not n[:m.start()].rstrip().endswith(')'):
            break
        n = n[:m.start()].rstrip()
    if n.endswith(')'):
        depth = 0
        for i in range(len(n) - 1, -1, -1):
            depth += {')': 1, '(': -1}.get(n[i], 0)
            if depth == 0:
                if i > 0 and not n[:i].endswith('operator'):
                    n = n[:i]
                break
    return n + clone

def norm(n):
    return re.sub(r'\s+', '', noparams(n))

# ---- ELF files: symbols (aliases), segments, unwind tables -------------------
PATHS = {}   # module basename -> a path to read it from

def run(args):
    return subprocess.run(args, capture_output=True, text=True).stdout

_syms = {}
def symbols(module):
    """normalized name -> set of addresses, from the module's .dynsym/.symtab and its
    /usr/lib/debug/.build-id file's .symtab (where perf and cbottleneck find names)."""
    if module in _syms:
        return _syms[module]
    table = {}
    path = PATHS.get(module)
    files = []
    if path and os.path.exists(path):
        files.append(path)
        m = re.search(r'Build ID: ([0-9a-f]+)', run(['readelf', '-n', path]))
        if m:
            dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (m.group(1)[:2], m.group(1)[2:])
            if os.path.exists(dbg):
                files.append(dbg)
    for f in files:
        for line in run(['readelf', '-sW', '-C', f]).splitlines():
            p = line.split(None, 7)
            if len(p) < 8 or p[3] not in ('FUNC', 'IFUNC') or p[6] == 'UND':
                continue
            addr = int(p[1], 16)
            if addr:
                name = re.sub(r'@@?[A-Za-z_][\w.]*$', '', p[7])
                table.setdefault(norm(name), set()).add(addr)
    _syms[module] = table
    return table

def canon(module, name):
    """The key two rows are matched by: module@address when the name is one symbol of
    the module (so glibc's aliases, memcpy/memmove, meet), else the normalized name."""
    k = norm(name)
    if module and not re.fullmatch(r'.*\+0x[0-9a-f]+', name):
        a = symbols(module).get(k)
        if a and len(a) == 1:
            return '%s@0x%x' % (module, next(iter(a)))
    return k

_elf = {}
def elf_info(path):
    """(LOAD segments [(offset, filesz, vaddr)], sorted FDE starts, ends) of an ELF file."""
    if path in _elf:
        return _elf[path]
    info = None
    if path and os.path.exists(path):
        segs = []
        for line in run(['readelf', '-lW', path]).splitlines():
            f = line.split()
            if f and f[0] == 'LOAD':
                segs.append((int(f[1], 16), int(f[4], 16), int(f[2], 16)))
        fdes = sorted((int(a, 16), int(b, 16)) for a, b in
                      re.findall(r' FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)',
                                 run(['readelf', '--debug-dump=frames', path])))
        fdes = [x for x in fdes if x[1] > x[0]]
        info = (segs, [a for a, _ in fdes], [b for _, b in fdes])
    _elf[path] = info
    return info

def fde_name(dso, off):
    """perf's address-only row (a file offset) -> cbottleneck's module+0xSTART."""
    info = elf_info(PATHS.get(dso))
    if not info:
        return None
    segs, starts, ends = info
    vaddr = next((off - o + va for o, sz, va in segs if o <= off < o + sz), None)
    if vaddr is None:
        return None
    i = bisect.bisect_right(starts, vaddr) - 1
    if i < 0 or vaddr >= ends[i]:
        return None
    return '%s+0x%x' % (dso, starts[i])

# ---- the two tools' profiles --------------------------------------------------
def read_perf(txt):
    rows, kernel, ksamples = [], 0.0, 0
    for line in open(txt):
        if line.startswith('#') or not line.strip():
            continue
        f = [x.strip() for x in line.rstrip('\n').split('\t')]
        if len(f) < 5:
            continue
        samples, period, dso, sym = int(f[1]), float(f[2]), f[3], f[4]
        if sym.startswith('[k]'):
            kernel += period; ksamples += samples
            continue
        name = re.sub(r'^\[.\]\s*', '', sym)
        name = re.sub(r'@@?[A-Za-z_][\w.]*$', '', name)
        rows.append((dso, name, samples, period))
    return dict(rows=rows, kernel=kernel, ksamples=ksamples)

def finish_perf(p):
    fn, names, mapped, unmapped = {}, {}, 0, 0
    for dso, name, samples, period in p['rows']:
        if re.fullmatch(r'0x[0-9a-f]+', name):
            n = fde_name(dso, int(name, 16))
            if n:
                name = n + '*'; mapped += samples
            else:
                name = '%s+%s (no FDE)' % (dso, name); unmapped += samples
        k = canon(dso, name.rstrip('*'))
        v = fn.setdefault(k, [0, 0.0]); v[0] += samples; v[1] += period
        names.setdefault(k, name)
    p.update(fn=fn, names=names, mapped=mapped, unmapped=unmapped,
             usamples=sum(v[0] for v in fn.values()))
    return p

def read_cbn(path):
    r = json.load(open(path))
    for m in r['modules']:
        PATHS.setdefault(m['file'], m['path'])
    return r

def finish_cbn(r):
    fn, names, kernel = {}, {}, 0
    for f in r['functions']:
        s = f['self_samples']
        if f['name'] == '[kernel]':
            kernel += s
            continue
        if s == 0:
            continue
        k = canon(f['module'], f['name'])
        v = fn.setdefault(k, [0, 0.0]); v[0] += s; v[1] += s
        names.setdefault(k, f['name'])
    return dict(fn=fn, names=names, kernel=kernel, usamples=sum(v[0] for v in fn.values()),
                samples=r['run']['samples'], lost=sum(r['run']['lost'].values()))

def pool(profs):
    out = dict(fn={}, names={})
    for p in profs:
        for k, (s, w) in p['fn'].items():
            v = out['fn'].setdefault(k, [0, 0.0]); v[0] += s; v[1] += w
        for k, n in p['names'].items():
            out['names'].setdefault(k, n)
    for f in ('kernel', 'ksamples', 'usamples', 'mapped', 'unmapped', 'samples', 'lost'):
        if f in profs[0]:
            out[f] = sum(p[f] for p in profs)
    return out

def shares(p):
    tot = sum(w for _, w in p['fn'].values()) or 1.0
    return {k: 100.0 * w / tot for k, (_, w) in p['fn'].items()}

def ranked(sh):
    return sorted(sh, key=lambda k: (-sh[k], k))

def figures(c, p):
    cs, ps = shares(c), shares(p)
    ct, pt = ranked(cs)[:TOP], ranked(ps)[:TOP]
    top1 = bool(ct and pt and ct[0] == pt[0])
    overlap = len(set(ct) & set(pt))
    diff = sum(abs(cs[k] - ps.get(k, 0.0)) for k in ct)
    return top1, overlap, diff

def fmt_fig(t):
    top1, ov, d = t
    return 'top-1 same %-3s  top-5 overlap %d/5  sum|diff| %5.1f pp' % ('yes' if top1 else 'no', ov, d)

def short(s, n):
    return s if len(s) <= n else s[:n - 1] + '~'

# perf's dso names -> paths (perf buildid-list), cbottleneck's modules -> paths (JSON)
for i in range(runs):
    for line in open('%s/perf.%d.ids' % (tmp, i)):
        f = line.split(None, 1)
        if len(f) == 2 and f[1].startswith('/'):
            PATHS.setdefault(os.path.basename(f[1].strip()), f[1].strip())
CJ = [read_cbn('%s/cbn.%d.json' % (tmp, i)) for i in range(runs)]
P = [finish_perf(read_perf('%s/perf.%d.txt' % (tmp, i))) for i in range(runs)]
C = [finish_cbn(r) for r in CJ]

print('== %s: %s' % (prog, cmd))
print('   %d run(s) per tool, interleaved; user-space self shares of all processes of the command' % runs)
for i in range(runs):
    p, c = P[i], C[i]
    pk = 100.0 * p['kernel'] / ((p['kernel'] + sum(w for _, w in p['fn'].values())) or 1)
    ck = 100.0 * c['kernel'] / ((c['kernel'] + c['usamples']) or 1)
    print('   run %d: perf %d user samples (+%d kernel = %.1f%%, dropped); '
          'cbottleneck %d user periods from %d samples (+%d [kernel] = %.1f%%, dropped)%s'
          % (i + 1, p['usamples'], p['ksamples'], pk, c['usamples'], c['samples'],
             c['kernel'], ck, '; %d lost' % c['lost'] if c['lost'] else ''))

pp, pc = pool(P), pool(C)
cs, ps = shares(pc), shares(pp)
cr, pr = ranked(cs), ranked(ps)
W = 44
print()
print('   Top functions by self share, all runs pooled (samples = sum over runs; cbottleneck counts periods)')
print('   %2s  %-*s %8s %7s | %-*s %8s %7s' % ('#', W, 'cbottleneck', 'samples', 'share', W, 'perf', 'samples', 'share'))
for r in range(rows):
    left = ' ' * (W + 17)
    right = ''
    if r < len(cr):
        k = cr[r]
        left = '%-*s %8d %6.2f%%' % (W, short(pc['names'][k], W), pc['fn'][k][0], cs[k])
    if r < len(pr):
        k = pr[r]
        right = '%-*s %8d %6.2f%%' % (W, short(pp['names'][k], W), pp['fn'][k][0], ps[k])
    print('   %2d  %s | %s' % (r + 1, left, right))
print()
print("   cbottleneck's top 5 against perf's share of the same function (pooled):")
print('   %-*s %8s %8s %8s' % (W + 4, 'function', 'cbn', 'perf', '|diff|'))
for k in cr[:TOP]:
    pv = ps.get(k)
    print('   %-*s %7.2f%% %8s %7.2fpp' % (W + 4, short(pc['names'][k], W + 4), cs[k],
          '%.2f%%' % pv if pv is not None else 'absent', abs(cs[k] - (pv or 0.0))))
notes = []
if pp.get('mapped') or pp.get('unmapped'):
    notes.append('* perf printed only an address (no symbol) for %d samples; %d of them were matched by the'
                 % (pp['mapped'] + pp['unmapped'], pp['mapped']))
    notes.append("  start of their function in the module's .eh_frame (cbottleneck's module+0xSTART names)"
                 + ('; %d (marked "no FDE") are not comparable' % pp['unmapped'] if pp['unmapped'] else ''))
shown = set(cr[:rows]) | set(pr[:rows])
for k in sorted(shown):
    if k in pc['names'] and k in pp['names'] and norm(pc['names'][k]) != norm(pp['names'][k].rstrip('*')):
        notes.append('= same function, two names (one address in %s): cbottleneck %s, perf %s'
                     % (k.split('@')[0], pc['names'][k], pp['names'][k]))
for n in notes:
    print('   ' + n)
print('   C++ names match without their parameter lists (perf prints none); symbol versions (@@GLIBC_x) are cut.')
print()
figs = []
for i in range(runs):
    t = figures(C[i], P[i]); figs.append(t)
    print('   run %d:  %s' % (i + 1, fmt_fig(t)))
if runs >= 2:
    # The floor the figures can reach: the same tool against itself, run i vs run j.
    for label, X in (('perf vs perf', P), ('cbottleneck vs cbottleneck', C)):
        fs = [figures(X[i], X[j]) for i in range(runs) for j in range(i + 1, runs)]
        print('   run-to-run noise, %s: sum|diff| %s pp, top-5 overlap %s, top-1 same %d/%d'
              % (label, ','.join('%.1f' % f[2] for f in fs), ','.join(str(f[1]) for f in fs),
                 sum(f[0] for f in fs), len(fs)))
t = figures(pc, pp)
ok = t[0] and t[1] >= 4 and t[2] <= 10.0
print('   pooled: %s   targets (same top-1, overlap >= 4, <= 10 pp): %s' % (fmt_fig(t), 'met' if ok else 'MISSED'))
ds = sorted(f[2] for f in figs)
med = ds[len(ds) // 2] if len(ds) % 2 else (ds[len(ds) // 2 - 1] + ds[len(ds) // 2]) / 2
print('SUMMARY %-7s top1=%s overlap=%d sumdiff=%.1f  per run: top1 %d/%d, overlap %s, sumdiff %s (median %.1f)'
      % (prog, 'yes' if t[0] else 'no', t[1], t[2], sum(f[0] for f in figs), runs,
         ','.join(str(f[1]) for f in figs), ','.join('%.1f' % f[2] for f in figs), med))
print()
EOF

# ---- runs ---------------------------------------------------------------------
run_perf() { # PROG I ARGV...
	local p=$1 i=$2 d="$TMP/$1"; shift 2
	"$PERF" record -q -N -F "$FREQ" -g -o "$d/perf.$i.data" -- "$@" <"${STDIN[$p]:-/dev/null}" >/dev/null 2>"$d/perf.$i.err" ||
		die "$p: perf record -- $* failed: $(tail -n 3 "$d/perf.$i.err")"
	"$PERF" report -i "$d/perf.$i.data" --no-children --sort dso,sym --stdio -g none \
		-F overhead,sample,period,dso,sym -t $'\t' >"$d/perf.$i.txt" 2>"$d/perf.$i.rerr" ||
		die "$p: perf report failed: $(tail -n 3 "$d/perf.$i.rerr")"
	# The files behind perf's dso names, to read their symbols and unwind tables.
	"$PERF" buildid-list --with-hits -i "$d/perf.$i.data" >"$d/perf.$i.ids" 2>/dev/null || : >"$d/perf.$i.ids"
}
run_cbn() { # PROG I ARGV...
	local p=$1 i=$2 d="$TMP/$1"; shift 2
	CBN_SYMCACHE_DIR="$TMP/symcache" "$CBN" -q -F "$FREQ" --inline fold --python native --json "$d/cbn.$i.json" \
		-- "$@" <"${STDIN[$p]:-/dev/null}" >/dev/null 2>"$d/cbn.$i.err" ||
		die "$p: cbottleneck -- $* failed (exit $?): $(tail -n 3 "$d/cbn.$i.err")"
	[ -s "$d/cbn.$i.json" ] || die "$p: cbottleneck wrote no JSON report"
}

echo "accuracy: perf record -F $FREQ -g  vs  cbottleneck -F $FREQ --inline fold --python native, $RUNS run(s) each"
echo "machine: $(uname -r), $(nproc) CPUs, $("$PERF" --version), perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?), uid $(id -u)"
echo
summary=()
for p in $PROGS; do
	[ -n "${CMD[$p]:-}" ] || continue
	read -r -a argv <<<"${CMD[$p]}"
	mkdir -p "$TMP/$p"
	for ((i = 0; i < RUNS; i++)); do
		# Alternate which tool goes first, so neither always runs on a warmer machine.
		if ((i % 2 == 0)); then
			run_perf "$p" "$i" "${argv[@]}"; run_cbn "$p" "$i" "${argv[@]}"
		else
			run_cbn "$p" "$i" "${argv[@]}"; run_perf "$p" "$i" "${argv[@]}"
		fi
	done
	"$PY" "$TMP/compare.py" "$p" "${argv[*]}${STDIN[$p]:+ < ${STDIN[$p]}}" "$RUNS" "$TMP/$p" "$ROWS" >"$TMP/$p/out" ||
		die "$p: comparing the profiles failed"
	grep -v '^SUMMARY ' "$TMP/$p/out"
	summary+=("$(grep '^SUMMARY ' "$TMP/$p/out" | cut -d' ' -f2-)")
	if [ -n "${KEEP:-}" ]; then
		rm -f "$TMP/$p"/*.err "$TMP/$p"/*.rerr
		cp -r "$TMP/$p" "$KEEP/" || die "cannot copy into KEEP=$KEEP"
	fi
	rm -f "$TMP/$p"/perf.*.data
done

echo "summary (pooled runs; targets: top1=yes, overlap >= 4, sumdiff <= 10 pp)"
for s in "${summary[@]}"; do echo "  $s"; done
