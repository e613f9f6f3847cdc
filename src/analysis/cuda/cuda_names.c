/*
 * cuda_names.c — what CUDA records are called and what names say: display
 * names of ops, API calls and ranges; which API functions synchronize; which
 * modules, files and frames belong to the CUDA runtime or to the launch glue
 * nvcc generates (docs/cuda.md, "Launch sites"); and the strings the
 * analysis keeps (cuda_keep_str), made here and by the display names and
 * sites, freed with the analysis (cuda_analysis.c).
 */
#include <string.h>

#include "cuda_int.h"
#include "names.h"

char *cuda_keep_str(struct cuda_priv *pv, char *s)
{
	if (!s)
		return NULL;
	if (util_grow((void **)&pv->strs, &pv->capstrs, pv->nstrs, sizeof(char *))) {
		free(s);
		return NULL;
	}
	pv->strs[pv->nstrs++] = s;
	return s;
}

static const char *or_unnamed(const char *s, const char *unnamed)
{
	return s && *s ? s : unnamed;
}

const char *cuda_api_name(const struct prof_cuda_api *c)
{
	return or_unnamed(c->name, "[unknown API]");
}

const char *cuda_memop_name(uint32_t gpu_kind, uint32_t copy_kind)
{
	static const char *const copy[] = {
		[CBN_COPY_UNKNOWN] = "[CUDA memcpy]",
		[CBN_COPY_HTOD] = "[CUDA memcpy HtoD]",
		[CBN_COPY_DTOH] = "[CUDA memcpy DtoH]",
		[CBN_COPY_HTOA] = "[CUDA memcpy HtoA]",
		[CBN_COPY_ATOH] = "[CUDA memcpy AtoH]",
		[CBN_COPY_ATOA] = "[CUDA memcpy AtoA]",
		[CBN_COPY_ATOD] = "[CUDA memcpy AtoD]",
		[CBN_COPY_DTOA] = "[CUDA memcpy DtoA]",
		[CBN_COPY_DTOD] = "[CUDA memcpy DtoD]",
		[CBN_COPY_HTOH] = "[CUDA memcpy HtoH]",
		[CBN_COPY_PTOP] = "[CUDA memcpy PtoP]",
	};

	if (gpu_kind == PROF_GPU_MEMSET)
		return "[CUDA memset]";
	if (copy_kind < sizeof(copy) / sizeof(copy[0]))
		return copy[copy_kind];
	return copy[CBN_COPY_UNKNOWN];
}

const char *cuda_op_name(const struct prof_gpu_op *op)
{
	if (op->name && *op->name)
		return op->name;
	if (op->kind == PROF_GPU_KERNEL)
		return "[unknown kernel]";
	return cuda_memop_name(op->kind, op->copy_kind);
}

const char *cuda_range_key(struct cuda_priv *pv, const struct prof_range *r)
{
	const char *name = or_unnamed(r->name, "[unnamed range]");

	if (r->domain && *r->domain)
		return cuda_keep_str(pv, xasprintf("%s:%s", r->domain, name));
	return name;
}

/* Length of name without a "_vNNNN" version suffix and "_ptsz"/"_ptds". */
static size_t api_base_len(const char *name)
{
	size_t n = strlen(name), i;

	for (;;) {
		if (n > 5 && (strncmp(name + n - 5, "_ptsz", 5) == 0 ||
			      strncmp(name + n - 5, "_ptds", 5) == 0)) {
			n -= 5;
			continue;
		}
		i = n;
		while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
			i--;
		if (i < n && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_') {
			n = i - 2;
			continue;
		}
		return n;
	}
}

int cuda_api_is_sync(const char *name)
{
	static const char *const sync[] = {
		"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D",
		"cudaMemcpyPeer", "cudaMemcpy3DPeer", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol",
		"cudaMemcpyToArray", "cudaMemcpyFromArray", "cudaMemcpy2DToArray",
		"cudaMemcpy2DFromArray", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize", "cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyPeer",
		"cuMemcpy2D", "cuMemcpy2DUnaligned", "cuMemcpy3D", "cuMemcpy3DPeer",
		"cuMemcpyHtoA", "cuMemcpyAtoH",
	};
	size_t n, i;

	if (!name)
		return 0;
	n = api_base_len(name);
	for (i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		if (strlen(sync[i]) == n && strncmp(sync[i], name, n) == 0)
			return 1;
	return 0;
}

int cuda_module_is_runtime(const char *m)
{
	if (!m)
		return 0;
	return strncmp(m, "libcudart", 9) == 0 || strncmp(m, "libcuda.", 8) == 0 ||
	       strcmp(m, "libcuda") == 0 || strncmp(m, "libcupti", 8) == 0 ||
	       strncmp(m, "libcbottleneck", 14) == 0;
}

/* The last component of a qualified bare name: "ns::k<int>" gives "k<int>". */
static const char *fn_last(const char *bare, size_t len, size_t *out_len)
{
	size_t i, b = 0;
	int depth = 0;

	for (i = 0; i + 1 < len; i++) {
		if (bare[i] == '<' || bare[i] == '(')
			depth++;
		else if ((bare[i] == '>' || bare[i] == ')') && depth)
			depth--;
		else if (!depth && bare[i] == ':' && bare[i + 1] == ':')
			b = i + 2;
	}
	*out_len = len - b;
	return bare + b;
}

static int has_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);

	return len >= n && strncmp(s, pre, n) == 0;
}

int cuda_file_is_generated(const char *file)
{
	const char *base;

	if (!file || !*file)
		return 0;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (strstr(base, ".cudafe1."))
		return 1;   /* *.cudafe1.stub.c, *.cudafe1.cpp, ...: nvcc's temporaries */
	if (strcmp(base, "cuda_runtime.h") == 0)
		return 1;
	return strcmp(base, "host_runtime.h") == 0 && base - file >= 4 &&
	       strncmp(base - 4, "crt/", 4) == 0;
}

int cuda_file_in_toolkit(const char *file)
{
	const char *inc, *q;

	if (!file || !(inc = strstr(file, "/include/")))
		return 0;
	/* /usr/local/cuda/include, /usr/local/cuda-13.0/targets/x86_64-linux/include,
	 * /opt/nvidia/hpc_sdk/.../cuda/12.3/include: a "cuda*" directory above include/ */
	for (q = file; q < inc; q++)
		if (*q == '/' && strncmp(q + 1, "cuda", 4) == 0)
			return 1;
	return 0;
}

int cuda_frame_is_launch_glue(const char *function, const char *file)
{
	const char *bare, *last;
	size_t blen, llen;

	if (cuda_file_is_generated(file))
		return 1;
	if (!function || !*function)
		return 0;
	bare = names_bare(function, &blen);
	last = fn_last(bare, blen, &llen);
	if (has_prefix(last, llen, "__device_stub__") || has_prefix(last, llen, "__cudaLaunch") ||
	    has_prefix(last, llen, "cudaLaunch") ||
	    has_prefix(last, llen, "__cudaPushCallConfiguration") ||
	    has_prefix(last, llen, "__cudaPopCallConfiguration"))
		return 1;
	/* A static cudart lives in the executable: its functions (cuda*, __cuda*,
	 * cudart::*, and the internal libcudart_static_<hash>) have no source
	 * file, or one in the toolkit's headers.  A user's own cudaCheck() in the
	 * user's file stays. */
	if (has_prefix(bare, blen, "cuda") || has_prefix(bare, blen, "__cuda") ||
	    has_prefix(bare, blen, "libcudart_static"))
		return !file || !*file || cuda_file_in_toolkit(file);
	return 0;
}

int cuda_frame_is_device_stub(const char *function)
{
	const char *bare, *last;
	size_t blen, llen;

	if (!function)
		return 0;
	bare = names_bare(function, &blen);
	last = fn_last(bare, blen, &llen);
	return has_prefix(last, llen, "__device_stub__");
}

int cuda_frame_is_host_wrapper(const char *function, const char *kernel, const char *stub)
{
	const char *a, *b;
	size_t alen, blen;

	if (!function || !*function)
		return 0;
	a = names_bare(function, &alen);
	if (kernel && *kernel) {
		b = names_bare(kernel, &blen);
		if (alen == blen && strncmp(a, b, alen) == 0)
			return 1;
	}
	/* "__device_stub__Z7kernelEPf" names the kernel "_Z7kernelEPf": a wrapper
	 * whose symbol was not demangled (extern "C" view, no C++ demangler). */
	if (stub && *stub) {
		b = names_bare(stub, &blen);
		b = fn_last(b, blen, &blen);
		if (has_prefix(b, blen, "__device_stub__")) {
			b += strlen("__device_stub_");
			blen -= strlen("__device_stub_");
			if (alen == blen && strncmp(a, b, alen) == 0)
				return 1;
		}
	}
	return 0;
}

/* --- vendor libraries, frameworks, the interpreter ------------------------------ */

/* Module basenames (prefixes) of libraries that are not the user's code: the
 * CUDA math and communication libraries, CUTLASS-based kernel libraries, and
 * the frameworks (their launch glue, dispatchers and bindings).  docs/cuda.md
 * ("Launch sites") lists them; keep it in step. */
static const char *const vendor_modules[] = {
	"libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse", "libcusolver",
	"libcutensor", "libcudss", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt",
	"libnvtx", "libnvblas", "libnpp", "libnvinfer", "libcutlass", "flash_attn",
	"libflashattention", "libtransformer_engine",
	"libtorch", "libc10", "libshm", "libggml", "libonnxruntime",
	"libtensorflow", "_pywrap_tensorflow", "libxla", "libjax",
};

static const char *const system_modules[] = {
	"libc.so", "libc-", "libstdc++", "libgcc_s", "ld-linux", "libpthread", "libm.so",
	"libdl", "libgomp", "libiomp", "libomp",
};

static int has_any_prefix(const char *s, const char *const *pre, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strncmp(s, pre[i], strlen(pre[i])) == 0)
			return 1;
	return 0;
}

/* "python3", "python3.12", "python3.12d": the interpreter's executable. */
static int is_python_exe(const char *m)
{
	if (strncmp(m, "python", 6) != 0)
		return 0;
	for (m += 6; *m; m++)
		if (!((*m >= '0' && *m <= '9') || *m == '.' || *m == 'd' || *m == 'm' || *m == 't'))
			return 0;
	return 1;
}

static int ends_in(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

enum cuda_frame_class cuda_frame_class(const char *module, const char *function,
				       const char *file)
{
	const char *bare;
	size_t blen;

	/* A Python function (its line is in a .py file): the user's, unless it
	 * is the framework's own Python code. */
	if (file && ends_in(file, ".py"))
		return (strstr(file, "-packages/torch/") || strstr(file, "-packages/tensorflow/") ||
			strstr(file, "-packages/onnxruntime/"))
			? CUDA_FRAME_VENDOR : CUDA_FRAME_USER;
	if (module && *module) {
		if (has_any_prefix(module, vendor_modules,
				   sizeof(vendor_modules) / sizeof(vendor_modules[0])))
			return CUDA_FRAME_VENDOR;
		if (strncmp(module, "libpython", 9) == 0 || is_python_exe(module))
			return CUDA_FRAME_INTERP;
		if (has_any_prefix(module, system_modules,
				   sizeof(system_modules) / sizeof(system_modules[0])))
			return CUDA_FRAME_SYSTEM;
	}
	/* CUTLASS linked into the user's own binary */
	if (function && *function) {
		bare = names_bare(function, &blen);
		if (has_prefix(bare, blen, "cutlass::") || has_prefix(bare, blen, "cutlass_") ||
		    has_prefix(bare, blen, "cute::"))
			return CUDA_FRAME_VENDOR;
	}
	return CUDA_FRAME_USER;
}
