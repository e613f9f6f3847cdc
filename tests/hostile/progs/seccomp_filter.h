/*
 * seccomp_filter.h — a classic-BPF seccomp filter for the hostile programs:
 * the listed system calls are allowed, every other one gets `deny` (on
 * x86-64; the filter kills the process on another architecture).
 */
#ifndef SECCOMP_FILTER_H
#define SECCOMP_FILTER_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Install the filter on the calling thread (flags: SECCOMP_FILTER_FLAG_*);
 * 0 or -1 with errno. */
static inline int filter_install(const int *allow, int n, unsigned deny, unsigned flags)
{
	struct sock_filter f[128];
	struct sock_fprog prog;
	int k = 0, i;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (i = 0; i < n && k < 124; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allow[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (!flags)
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

#endif
