/*
 * test_export_trace_wait.c — off-CPU stretches in the trace, on the waiting
 * fixture (test_wait_fixture.h): one "off_cpu" slice per stretch on its
 * thread's lane, named by kind and blocking call ("off-CPU futex:
 * pthread_mutex_lock"), with kind, syscall, site and the holder in args; the
 * waits in a mutex lock as "lock" flows from the waiter's slice to the
 * holder's lane at the wait's end; none for the read; --trace-window clips
 * them.  The file passes tests/e2e/export_check.py.
 */

#include <cjson/cJSON.h>

#include "report/export.h"
#include "test_trace_read.h"
#include "testlib.h"
#include "test_wait_fixture.h"

static char dir[64];

static cJSON *load(const char *path)
{
	char *text = ex_slurp(path, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;

	free(text);
	return root;
}

/* Events with ph and cat, in file order, into out (at most max). */
static int events(const cJSON *root, const char *ph, const char *cat, const cJSON **out, int max)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, jr_get(root, "traceEvents"))
		if (!strcmp(tr_str(e, "ph"), ph) && !strcmp(tr_str(e, "cat"), cat) && n < max)
			out[n++] = e;
	return n;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	const char *path;
	const cJSON *ev[16], *s[4], *f[4];
	cJSON *root;
	int n, nread = 0, nlock = 0;

	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());
	wf_profile(&p);
	a = wf_analysis(&p, 1);
	path = tr_write(&a, dir, "wait", 0, 0);
	REQUIRE(path != NULL);
	CHECK(tr_check(path, "") == 0);
	root = load(path);
	REQUIRE(root != NULL);
	n = events(root, "X", "off_cpu", ev, 16);
	CHECK_EQ_INT(n, 3);
	for (int i = 0; i < n; i++) {
		const cJSON *args = jr_get(ev[i], "args");

		if (!strcmp(tr_str(ev[i], "name"), "off-CPU futex: pthread_mutex_lock")) {
			nlock++;
			CHECK_EQ_INT(jr_num(ev[i], "ts"), 10000);
			CHECK_EQ_INT(jr_num(ev[i], "dur"), 40000);
			CHECK_STR(tr_str(args, "kind"), "futex");
			CHECK_EQ_INT(jr_num(args, "syscall"), 202);
			CHECK_STR(tr_str(args, "site"), "worker");
			CHECK_STR(tr_str(args, "addr"), "0x7ffd1000");
			CHECK_EQ_INT(jr_num(args, "holder_tid"), WF_PID);
			CHECK(jr_num(ev[i], "tid") == WF_PID + 1 || jr_num(ev[i], "tid") == WF_PID + 2);
		} else if (!strcmp(tr_str(ev[i], "name"), "off-CPU io: read")) {
			nread++;
			CHECK_EQ_INT(jr_num(ev[i], "tid"), WF_PID + 2);
			CHECK_STR(tr_str(args, "site"), "load_item");
			CHECK(jr_get(args, "holder_tid") == NULL);
		}
		CHECK_EQ_INT(jr_num(ev[i], "pid"), WF_PID);
	}
	CHECK_EQ_INT(nlock, 2);
	CHECK_EQ_INT(nread, 1);
	/* two lock waits: two flows into the holder's lane at the wait's end */
	CHECK_EQ_INT(events(root, "s", "lock", s, 4), 2);
	CHECK_EQ_INT(events(root, "f", "lock", f, 4), 2);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(jr_num(f[i], "tid"), WF_PID);
		CHECK_STR(tr_str(f[i], "bp"), "e");
		CHECK(jr_num(f[i], "ts") > 49999 && jr_num(f[i], "ts") < 50000);
		CHECK(jr_num(s[i], "tid") == WF_PID + 1 || jr_num(s[i], "tid") == WF_PID + 2);
	}
	CHECK(jr_num(s[0], "id") != jr_num(s[1], "id"));
	cJSON_Delete(root);

	/* a window after the lock waits keeps only the read, cut to it */
	path = tr_write(&a, dir, "window", 70 * EX_MS, 200 * EX_MS);
	REQUIRE(path != NULL);
	root = load(path);
	REQUIRE(root != NULL);
	n = events(root, "X", "off_cpu", ev, 16);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_STR(tr_str(ev[0], "name"), "off-CPU io: read");
		CHECK_EQ_INT(jr_num(ev[0], "dur"), 20000);
	}
	CHECK_EQ_INT(events(root, "s", "lock", s, 4), 0);
	cJSON_Delete(root);

	wf_free(&p);
	ex_rmdir(dir);
	return test_result();
}
