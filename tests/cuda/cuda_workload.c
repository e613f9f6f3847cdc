/*
 * cuda_workload.c — the simulated-CUDA program the e2e tests run under
 * cbottleneck (tests/e2e/cuda_*.sh).  Links the simulated libcupti.so.13 of
 * tests/fakecupti; the launcher's CUDA_INJECTION64_PATH brings in the real
 * libcbottleneck_cuda.so.  Usage: cuda_workload MODE [EXIT]
 *   main    the known-truth workload of workload.h, then exits with EXIT (0)
 *   nosync  launches 5 long kernels and exits without synchronizing
 *   fork    starts CUDA, forks a child that launches a kernel and burns CPU
 *   nocuda  never touches CUDA: burns CPU only
 *   nvcc    7 launches through an nvcc-shaped chain (host wrapper, device stub)
 *   exit    10 kernels, synchronize, sleep 0.5 s, then _exit(0): atexit skipped
 *   kill    the same, then SIGKILL itself
 *   memory  the GPU memory workload (wl_memory in workload.h)
 *   nccl    compute and NCCL-like kernels overlapping by known amounts, per
 *           cbn_step() (wl_nccl in workload.h)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakecuda.h"
#include "workload.h"

__attribute__((noinline)) static void child_work(void)
{
	const struct fakecuda_kernel k = { .name = "_Z11child_kernv", .gpu_ns = 1000,
					   .grid = { 1, 1, 1 }, .block = { 32, 1, 1 } };

	fakecuda_launch(&k, 0);
	fakecuda_device_sync();
	host_work(100);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	int code = argc > 2 ? atoi(argv[2]) : 0;
	int rc = 0, status;
	pid_t pid;

	if (strcmp(mode, "main") == 0) {
		rc = wl_main();
	} else if (strcmp(mode, "nosync") == 0) {
		rc = wl_nosync(5);
		host_work(50);
	} else if (strcmp(mode, "fork") == 0) {
		rc = wl_nosync(0);
		for (int i = 0; i < 10; i++)
			launch_a();
		fakecuda_device_sync();
		pid = fork();
		if (pid == 0) {
			child_work();
			exit(0);
		}
		host_work(100);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			rc = 1;
	} else if (strcmp(mode, "exit") == 0 || strcmp(mode, "kill") == 0) {
		rc = wl_nosync(0);
		for (int i = 0; i < 10; i++)
			launch_a();
		fakecuda_device_sync();
		host_work(100);
		usleep(500 * 1000);
		printf("cuda_workload: %s now\n", mode);
		fflush(stdout);
		if (mode[0] == 'k')
			raise(SIGKILL);
		_exit(rc);
	} else if (strcmp(mode, "nvcc") == 0) {
		rc = wl_nvcc();
	} else if (strcmp(mode, "memory") == 0) {
		rc = wl_memory();
	} else if (strcmp(mode, "nccl") == 0) {
		rc = wl_nccl();
	} else if (strcmp(mode, "nocuda") == 0) {
		host_work(200);
	} else {
		fprintf(stderr, "usage: cuda_workload main|nosync|fork|nocuda|exit|kill|nvcc|memory|nccl [EXIT]\n");
		return 2;
	}
	printf("cuda_workload: %s done\n", mode);
	return rc ? rc : code;
}
