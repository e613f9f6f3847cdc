/*
 * seccomp_exec.c — main installs a seccomp filter that traps (SIGSYS, which
 * kills) perf_event_open, timer_create and a few other calls the program
 * never makes, then execs the suite's helper, which inherits the filter.
 * Must hold: the helper runs as without the profiler (the agent stays
 * inert in an image exec'd under a filter of the program's, and the image
 * that execs records that it will not be profiled).
 */
#include <stddef.h>
#include <sys/syscall.h>

#include "hostile.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

/* Trap only these (the new image's loader needs everything else). */
static const int trapped[] = {SYS_perf_event_open, SYS_timer_create, SYS_process_vm_readv,
			      SYS_sigaltstack, SYS_unshare, SYS_memfd_create};

int main(void)
{
	struct sock_filter f[32];
	struct sock_fprog prog;
	char helper[PATH_MAX];
	unsigned k = 0, i, n = sizeof(trapped) / sizeof(trapped[0]);

	say("start\n");
	burn_cpu(0.2);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)trapped[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		skip("seccomp filter refused: %s", strerrorname_np(errno));
	say("filter installed; exec the helper\n");
	snprintf(helper, sizeof(helper), "%s/hostile_helper", hostile_bindir());
	execl(helper, "hostile_helper", "burn", "0.3", "filtered", (char *)NULL);
	die("execl %s", helper);
}
