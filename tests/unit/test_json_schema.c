/*
 * test_json_schema.c — real JSON reports (one CPU-only with JIT code and
 * stacks unwound past code without CFI, so run.sampler.unwind is included;
 * one with CUDA status, API calls and a kernel, so cuda_report.c's object is
 * included) validated
 * against docs/report.schema.json with python3 + jsonschema.  Skips (77) when
 * python3 or its jsonschema module is missing.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/report.h"
#include "analysed.h"
#include "testlib.h"
#include "test_cpu_builder.h"

static const char validator[] =
	"import json, sys, jsonschema\n"
	"schema = json.load(open(sys.argv[1]))\n"
	"cls = jsonschema.validators.validator_for(schema)\n"
	"cls.check_schema(schema)\n"
	"bad = 0\n"
	"for path in sys.argv[2:]:\n"
	"    inst = json.load(open(path))\n"
	"    for e in cls(schema).iter_errors(inst):\n"
	"        bad += 1\n"
	"        print('%s: /%s: %s' % (path, '/'.join(map(str, e.path)), e.message),\n"
	"              file=sys.stderr)\n"
	"sys.exit(1 if bad else 0)\n";

static void build(struct pb *b, int with_cuda)
{
	uint32_t mainf, work, pr, th;

	pb_init(b, 1000000, "./app");
	mainf = pb_func(b, "main", "/src/app.c", 10, "app");
	work = pb_func(b, "work", "/src/app.c", 3, "app");
	pr = pb_process(b, 10, 1, "/bin/app", "./app", 1000000);
	th = pb_thread(b, 10, pr, "app");
	pb_samples(b, th, pb_stack(b, 2, (uint32_t[]){ work, mainf }), 80, 1, 0);
	pb_samples(b, th, pb_stack(b, 1, (uint32_t[]){ mainf }), 20, 1, 0);
	b->p.processes[pr].clean_exit = 0;
	b->p.processes[pr].exited = 0;
	pb_nodebug(b, "libcuda.so.1");
	if (!with_cuda) {
		/* JIT code, named and not; stacks recovered and stopped */
		uint32_t named = pb_func(b, "jit_avx2_conv_fwd", "", 0, "jit");
		uint32_t anon = pb_func(b, "[jit] 0x7f0000001000", "", 0, "jit");
		struct prof_unwind_stop *s;

		b->p.funcs[named].flags = PROF_FUNC_JIT;
		b->p.funcs[anon].flags = PROF_FUNC_JIT | PROF_FUNC_JIT_ANON;
		pb_samples(b, th, pb_stack(b, 2, (uint32_t[]){ named, mainf }), 6, 1, 0);
		pb_samples(b, th, pb_stack(b, 1, (uint32_t[]){ anon }), 4, 1, 0);
		b->p.processes[pr].unwind.fp_samples = b->p.processes[pr].unwind.fp_weight = 6;
		b->p.processes[pr].unwind.stop_samples = b->p.processes[pr].unwind.stop_weight = 4;
		s = PB_PUSH(b, unwind_stops, nunwind_stops);
		*s = (struct prof_unwind_stop){ .process = pr, .cause = PROF_UNWIND_JIT,
						.place = "[jit] 0x7f0000001000", .samples = 4,
						.weight = 4 };
		return;
	}

	{
		static struct prof_cuda_status st;
		static struct prof_cuda_api api[2];
		static struct prof_gpu_op op;

		st.process = pr;
		st.state = CBN_CUDA_FINISHED;
		st.message = "";
		st.records = 3;
		st.buffers = 1;
		api[0] = (struct prof_cuda_api){ .start = 1000, .end = 6000, .thread = th,
						 .process = pr, .correlation = 1, .cbid = 211,
						 .domain = 0, .name = "cudaLaunchKernel",
						 .stack = 0 };
		api[1] = (struct prof_cuda_api){ .start = 7000, .end = 90000, .thread = th,
						 .process = pr, .correlation = 2, .cbid = 165,
						 .domain = 0, .name = "cudaDeviceSynchronize",
						 .stack = 0 };
		op = (struct prof_gpu_op){ .kind = PROF_GPU_KERNEL, .process = pr,
					   .start = 8000, .end = 88000, .correlation = 1,
					   .name = "saxpy(int, float, float*, float*)", .api = 0,
					   .grid = { 4096, 1, 1 }, .block = { 256, 1, 1 },
					   .registers = 16 };
		b->p.cuda_status = &st;
		b->p.ncuda_status = 1;
		b->p.cuda_api = api;
		b->p.ncuda_api = 2;
		b->p.gpu_ops = &op;
		b->p.ngpu_ops = 1;
	}
}

static void write_report(int with_cuda, const char *path)
{
	struct pb b;
	struct report_opts o = { .limit = 15 };
	char err[256] = "";

	build(&b, with_cuda);
	CHECK(report_json_write(analysed(&b.p), &o, path, err, sizeof(err)) == 0);
	if (err[0])
		fprintf(stderr, "%s\n", err);
	pb_free(&b);
}

int main(void)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char schema[4096], cpu[] = "/tmp/cbn-schema-cpu-XXXXXX",
			   gpu[] = "/tmp/cbn-schema-cuda-XXXXXX";
	char cmd[8192];
	int fd, st;

	if (system("python3 -c 'import jsonschema' 2>/dev/null") != 0) {
		fprintf(stderr, "skip: python3 with the jsonschema module is not installed "
				"(apt-get install python3-jsonschema)\n");
		return TEST_SKIP;
	}
	if (!src) {
		fprintf(stderr, "skip: CBN_SOURCE_DIR is not set (run through ctest)\n");
		return TEST_SKIP;
	}
	snprintf(schema, sizeof(schema), "%s/docs/report.schema.json", src);
	REQUIRE(access(schema, R_OK) == 0);
	fd = mkstemp(cpu);
	REQUIRE(fd >= 0);
	close(fd);
	fd = mkstemp(gpu);
	REQUIRE(fd >= 0);
	close(fd);
	write_report(0, cpu);
	write_report(1, gpu);
	snprintf(cmd, sizeof(cmd), "python3 -c \"$CBN_VALIDATOR\" '%s' '%s' '%s'", schema, cpu,
		 gpu);
	setenv("CBN_VALIDATOR", validator, 1);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the schema must also reject what it should: a function without self_ns */
	snprintf(cmd, sizeof(cmd),
		 "python3 - '%s' '%s' <<'EOF'\n"
		 "import json, sys, jsonschema\n"
		 "schema = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n"
		 "del d['functions'][0]['self_ns']\n"
		 "cls = jsonschema.validators.validator_for(schema)\n"
		 "sys.exit(0 if list(cls(schema).iter_errors(d)) else 1)\n"
		 "EOF",
		 schema, cpu);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the CPU report holds run.sampler.unwind, so the schema checked it */
	snprintf(cmd, sizeof(cmd),
		 "python3 - '%s' <<'EOF'\n"
		 "import json, sys\n"
		 "u = json.load(open(sys.argv[1]))['run']['sampler']['unwind']\n"
		 "ok = (u['jit']['samples'] == 10 and u['jit_unnamed']['samples'] == 4 and\n"
		 "      u['recovered_fp']['samples'] == 6 and u['stopped'][0]['cause'] == 'jit')\n"
		 "sys.exit(0 if ok else 1)\n"
		 "EOF",
		 cpu);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(cpu);
	unlink(gpu);
	return test_result();
}
