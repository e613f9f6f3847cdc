#!/bin/bash
# cuda_ops — operators recognised from native frames, end to end, on a
# simulated PyTorch training loop with known truth (tests/cuda/ops/ops_sim.h):
# frames named at::_ops::<op>::call and torch::autograd::generated::*::apply
# in a libtorch_sim.so, vendor libraries libcublas_sim.so and libcudnn_sim.so,
# an autograd engine thread, kernels on the simulated CUPTI.  Checks the
# operator table (exact CUDA self/total, launches, nesting; sampled CPU
# 3:1), the kernel names (demangled, short, distinct), the launch sites
# (user line -> operator -> kernel, past the vendor libraries), the
# framework rules, and --op-pattern on the kept session.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/ops/ops_train"
[ -e "$W" ] || skip "no C++ compiler at configure time: $W was not built"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -o "$T/session" --limit 100 --json "$T/r.json" -- "$W"
expect_rc 0
if python3 -c 'import jsonschema' 2>/dev/null; then
	validate_schema "$T/r.json"
else
	note "python3-jsonschema absent: the report is not checked against the schema"
fi
grep -q '^Operators, autograd-style (sorted by cuda_time_total' "$OUTF" ||
	fail "no operator table in the text report"
grep -Eq '^ +aten::addmm +[0-9.]+%' "$OUTF" || fail "no aten::addmm row in the operator table"
# C++ functions without their parameter lists in the CPU table
grep -q 'torch_sim.cc:[0-9]*(at::_ops::linear::call)' "$OUTF" ||
	fail "the CPU table does not show at::_ops::linear::call without its parameters"

python3 - "$T/r.json" "$CBN_SOURCE_DIR/tests/cuda/ops" <<'PY' || fail "operator table, kernels or launch sites differ from the truth"
import json, re, sys
d = json.load(open(sys.argv[1]))
src = sys.argv[2]
K = {}
for m in re.finditer(r'^#define (OPS_\w+) +(\S.*)$', open(src + "/ops_sim.h").read(), re.M):
    v = m.group(2).strip()
    K[m.group(1)] = int(v) if v.isdigit() else v.strip('"')
S = K["OPS_STEPS"]
bad = []

ops = {r["name"]: r for r in d["operators"]["rows"]}
def op(name, self_cuda, total, launches, self_launches, parents=None):
    r = ops.get(name)
    if not r:
        bad.append("no operator %s (have %s)" % (name, sorted(ops)))
        return
    got = (r["self_cuda_ns"], r["cuda_total_ns"], r["launches"], r["self_launches"])
    want = (self_cuda, total, launches, self_launches)
    if got != want:
        bad.append("%s: (self CUDA, CUDA total, launches, self launches) %s, expected %s" % (name, got, want))
    if parents is not None and sorted(r["parents"]) != sorted(parents):
        bad.append("%s: parents %s, expected %s" % (name, r["parents"], parents))

sg, cv, dg, xp = K["OPS_SGEMM_NS"], K["OPS_CONV_NS"], K["OPS_DGRAD_NS"], K["OPS_XPOSE_NS"]
lin, adds, bw, acc = K["OPS_LINEAR_PER_STEP"], K["OPS_ADDS_PER_STEP"], K["OPS_BW_ADDMM_PER_STEP"], K["OPS_ACCUMULATE_PER_STEP"]
add = K["OPS_ADD_NS"]
op("aten::linear", 0, S * lin * sg, S * lin, 0, [])
op("aten::addmm", S * lin * sg, S * lin * sg, S * lin, S * lin, ["aten::linear"])
op("aten::conv2d", 0, S * (cv + 2 * xp), 3 * S, 0, [])
op("aten::convolution", 0, S * (cv + 2 * xp), 3 * S, 0, ["aten::conv2d"])
op("aten::_convolution", 0, S * (cv + 2 * xp), 3 * S, 0, ["aten::convolution"])
op("aten::cudnn_convolution", S * (cv + 2 * xp), S * (cv + 2 * xp), 3 * S, 3 * S, ["aten::_convolution"])
op("aten::relu_", S * K["OPS_RELU_NS"], S * K["OPS_RELU_NS"], S, S, [])
op("aten::add_", S * (adds + acc) * add, S * (adds + acc) * add, S * (adds + acc), S * (adds + acc),
   ["torch::autograd::AccumulateGrad"])
op("aten::copy_", S * K["OPS_COPY_NS"], S * K["OPS_COPY_NS"], S, S, [])
op("AddmmBackward0", 0, S * bw * 2 * sg, S * bw * 2, 0, [])
op("aten::mm", S * bw * 2 * sg, S * bw * 2 * sg, S * bw * 2, S * bw * 2, ["AddmmBackward0"])
op("ConvolutionBackward0", 0, S * (dg + 2 * xp), 3 * S, 0, [])
op("aten::convolution_backward", S * (dg + 2 * xp), S * (dg + 2 * xp), 3 * S, 3 * S, ["ConvolutionBackward0"])
op("torch::autograd::AccumulateGrad", 0, S * acc * add, S * acc, 0, [])
o = d["operators"]
if o["self_cuda_total_ns"] != d["cuda"]["overview"]["gpu_ns"]:
    bad.append("self CUDA over the operators %s != all GPU time %s (every launch is inside one)" %
               (o["self_cuda_total_ns"], d["cuda"]["overview"]["gpu_ns"]))
if o["sort"] != "cuda_time_total" or o["rows"][0]["cuda_total_ns"] != max(r["cuda_total_ns"] for r in o["rows"]):
    bad.append("rows not sorted by cuda_time_total")
if ops.get("aten::addmm", {}).get("framework") != "pytorch":
    bad.append("aten::addmm framework %s" % ops.get("aten::addmm", {}).get("framework"))
if "at::_ops::addmm::call(at::Tensor const&)" not in ops.get("aten::addmm", {}).get("entry", ""):
    bad.append("aten::addmm entry %r: the full signature belongs in JSON" % ops.get("aten::addmm", {}).get("entry"))
# sampled CPU: addmm burns 3x what linear burns in its own code
a, l = ops["aten::addmm"]["self_cpu_ns"], ops["aten::linear"]["self_cpu_ns"]
want = K["OPS_ADDMM_BURN_MS"] / K["OPS_LINEAR_BURN_MS"]
if not l or not 0.75 * want <= a / l <= 1.25 * want:
    bad.append("self CPU addmm/linear = %s/%s, expected %.1fx +-25%%" % (a, l, want))
if not ops["aten::linear"]["cpu_total_ns"] >= a + l:
    bad.append("linear's CPU total does not hold addmm's")

# kernels: demangled, short names within the column and distinct
ks = {k["name"]: k for k in d["cuda"]["kernels"]}
for want_name in ["void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                  "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, cudnn::ops::nchw2nhwc_params_t<float> const*, cudnn::ops::nchw2nhwc_params_t<float>*)",
                  K["OPS_SGEMM"], K["OPS_DGRAD"]]:
    if want_name not in ks:
        bad.append("no kernel named %r (have %s)" % (want_name, sorted(ks)))
shorts = [k["short_name"] for k in d["cuda"]["kernels"]]
if len(set(shorts)) != len(shorts):
    bad.append("two kernels print alike: %s" % shorts)
if any(len(s) > 55 for s in shorts):
    bad.append("a kernel's short name is wider than 55 columns: %s" % shorts)
if not ks.get(K["OPS_DGRAD"], {}).get("short_name", "").startswith("cutlass__5x_cudnn::Kernel<"):
    bad.append("the cut mangled name reads %r" % ks.get(K["OPS_DGRAD"], {}).get("short_name"))

# launch sites: the user's line -> operator -> kernel
lines = {}
for i, t in enumerate(open(src + "/ops_train.cc"), 1):
    m = re.search(r'/\* site:(\w+) \*/', t)
    if m:
        lines[m.group(1)] = i
sites = d["cuda"]["launch_sites"]
def site(tag, op_name, launches, kernel):
    e = [s for s in sites if s["function"].startswith("train_step") and s["line"] == lines[tag] and s["op"] == op_name]
    if len(e) != 1 or e[0]["launches"] != launches or e[0]["kernel"] != kernel:
        bad.append("site %s: %s, expected train_step line %d -> %s -> %s x%d" % (tag, e, lines[tag], op_name, kernel, launches))
site("linear", "aten::addmm", S * lin, K["OPS_SGEMM"])
site("conv2d", "aten::cudnn_convolution", 3 * S, K["OPS_CONV"])
site("relu", "aten::relu_", S, [k for k in ks if "ReluFunctor" in k][0] if any("ReluFunctor" in k for k in ks) else "?")
site("add", "aten::add_", adds * S, [k for k in ks if "CUDAFunctor_add" in k][0] if any("CUDAFunctor_add" in k for k in ks) else "?")
site("copy", "aten::copy_", S, "[CUDA memcpy HtoD]")
for s in sites:
    if s["module"].startswith(("libcublas", "libcudnn", "libcudart", "libcupti")):
        bad.append("a launch site inside a vendor library: %s" % s)
    if s["module"].startswith("libtorch") and "::apply" not in s["function"]:
        bad.append("a launch site inside the framework that is not its autograd node: %s" % s)
bwd = [s for s in sites if "AddmmBackward0::apply" in s["function"]]
if sum(s["launches"] for s in bwd) != S * bw * 2 or any(s["op"] != "aten::mm" for s in bwd):
    bad.append("autograd thread's sites: %s" % bwd)

# the framework rules, with the operators that launched what they found
recos = {r["id"]: r["evidence"] for r in d["cuda"]["recommendations"]}
for rid, words in [("channels-last", "launched from aten::convolution_backward (50%), aten::cudnn_convolution (50%)"),
                   ("fp32-math", "compute capability 9.0: tensor cores, TF32"),
                   ("fuse-elementwise", "%d per step over %d steps" % (adds + acc, S))]:
    if words not in recos.get(rid, ""):
        bad.append("%s: evidence %r lacks %r" % (rid, recos.get(rid), words))
for b in bad:
    print("#", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# --op-pattern on the kept session: the user's own function as an operator,
# before the built-in rules
"$CBN" report --report - --json "$T/p.json" --op-pattern '^train_(st)ep$=my::\u1' "$T/session" \
	>"$T/p.out" 2>&1 || fail "report --op-pattern failed: $(tail -3 "$T/p.out")"
python3 - "$T/p.json" "$T/r.json" <<'PY' || fail "--op-pattern did not make train_step an operator holding the forward ops"
import json, sys
p, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ops = {o["name"]: o for o in p["operators"]["rows"]}
ref = {o["name"]: o for o in r["operators"]["rows"]}
u = ops.get("my::ST")
fwd = sum(ref[n]["cuda_total_ns"] for n in ["aten::linear", "aten::conv2d", "aten::relu_", "aten::copy_"]) + \
      ref["aten::add_"]["cuda_total_ns"] - ref["torch::autograd::AccumulateGrad"]["cuda_total_ns"]
ok = u is not None and u["framework"] == "user" and u["cuda_total_ns"] == fwd and u["self_cuda_ns"] == 0
ok = ok and "my::ST" in ops["aten::linear"]["parents"]
print("# my::ST: %s, expected CUDA total %d" % (u and (u["cuda_total_ns"], u["framework"]), fwd), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
rc=0
"$CBN" report --op-pattern 'a(b=x' "$T/session" >/dev/null 2>"$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "a bad --op-pattern is not a usage error (exit 2), got $rc"
grep -q "not a valid regular expression" "$T/bad.err" || fail "a bad --op-pattern does not say why: $(cat "$T/bad.err")"

# The other outputs carry the operators: folded stacks and the flame graph
# name a frame that enters one by it, the trace gives each launch and GPU
# op its operator, the HTML page has the operator table
"$CBN" report --report /dev/null --folded "$T/o.folded" --flamegraph "$T/o.svg" \
	--trace "$T/o.trace.json" --html "$T/o.html" "$T/session" 2>"$T/exp.err" ||
	fail "report with the exports failed: $(tail -3 "$T/exp.err")"
grep -q 'train_step;aten::linear;aten::addmm;' "$T/o.folded" ||
	fail "folded stacks do not read train_step;aten::linear;aten::addmm"
# (a sample in addmm::redispatch, which is no operator, keeps its name)
grep -Eq 'at::_ops::[A-Za-z0-9_]+::call' "$T/o.folded" &&
	fail "a folded frame still shows at::_ops::...::call instead of its operator"
grep -q '>aten::addmm' "$T/o.svg" || fail "the flame graph has no aten::addmm frame"
python3 - "$T/o.trace.json" <<'PY' || fail "trace events do not carry their operators"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
k = [e for e in ev if e.get("name") == "ampere_sgemm_128x64_nn"]
api = [e for e in ev if e.get("cat") == "cuda_runtime" and e.get("name") == "cudaLaunchKernel"]
ops = sorted({e["args"].get("op") for e in k})
print("# sgemm kernels' operators %s, launches with one %d of %d" %
      (ops, sum(1 for e in api if e["args"].get("op")), len(api)), file=sys.stderr)
sys.exit(0 if k and ops == ["aten::addmm", "aten::mm"] and all(e["args"].get("op") for e in api) else 1)
PY
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
ops=$(html_data "$T/o.html" 'len(d["report"]["operators"]["rows"])')
labels=$(html_data "$T/o.html" 'sum(1 for n in d["html"]["names"] if len(n) > 3 and n[3] == "aten::addmm")')
[ "$labels" = 1 ] || fail "the page's flame graph does not label addmm's frame aten::addmm ($labels)"
if html_find_browser >/dev/null; then
	html_open "$T/o.html" '#cuda' cuda_ops 4000
	html_expect '^render cuda ok'
	rows=$(python3 - "$DOM" <<'PY'
import sys
t = open(sys.argv[1], errors="replace").read()
sec = t[t.index('id="view-cuda"'):]
sec = sec[sec.index('<table'):]
sec = sec[:sec.index('</table>')]
print(sec.count("<tr") - 1)
PY
)
	[ "$rows" = "$ops" ] || fail "the page's operator table has $rows rows, the report $ops"
else
	note "no headless browser: the page's operator table is not rendered"
fi

# The gate: op[...] from a JSON report (compare) and from the analysis of a
# session (report --baseline); a baseline whose addmm took half the GPU time
# makes +10 % fail
rc=0
"$CBN" compare --fail 'op[aten::addmm].cuda:+10%' --fail 'op[aten::*].launches:+0' \
	"$T/r.json" "$T/r.json" >"$T/g.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "op[] gates fail a report against itself (exit $rc): $(cat "$T/g.out")"
grep -Eq '^op\[aten::addmm\]\.cuda .* ok$' "$T/g.out" || fail "no ok row for op[aten::addmm].cuda: $(cat "$T/g.out")"
python3 - "$T/r.json" "$T/half.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["operators"]["rows"]:
    if r["name"] == "aten::addmm":
        r["cuda_total_ns"] //= 2
json.dump(d, open(sys.argv[2], "w"))
PY
rc=0
"$CBN" report --report /dev/null --baseline "$T/half.json" --fail 'op[aten::addmm].cuda:+10%' \
	"$T/session" >"$T/g2.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "op[aten::addmm].cuda:+10% against a baseline with half of it: exit $rc, not 1"
grep -Eq 'op\[aten::addmm\]\.cuda .*FAIL' "$T/g2.out" || fail "no FAIL row: $(cat "$T/g2.out")"
