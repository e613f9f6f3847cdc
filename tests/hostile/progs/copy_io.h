/*
 * copy_io.h — the body shared by closefds_io.c and closefrom_io.c: after the
 * program has closed every fd above 2, it writes its own input file, reopens
 * it and copies it byte by byte into an output file with CPU work between the
 * bytes, then prints the fds it got, both offsets and both checksums.
 */
#include <fcntl.h>

#include "manyfuncs.h"

#define COPY_SIZE 16384

static void copy_io_run(void)
{
	static unsigned char data[COPY_SIZE];
	unsigned char c;
	uint64_t in_sum, out_sum = 0;
	long copied = 0;
	int in, out, fd;

	for (int i = 0; i < COPY_SIZE; i++)
		data[i] = (unsigned char)((i * 131 + 7) ^ (i >> 5));
	in_sum = fnv1a(data, sizeof(data), 0);
	fd = open("input.bin", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t)sizeof(data) || close(fd) < 0)
		die("writing input.bin");

	in = open("input.bin", O_RDONLY);
	out = open("output.bin", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (in < 0 || out < 0)
		die("opening input.bin/output.bin");
	say("opened input=fd%d output=fd%d\n", in, out);
	print_fds("opened");
	for (;;) {
		ssize_t n = read(in, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read");
		if (n == 0)
			break;
		/* CPU between the bytes, through 1024 functions (the sampler's
		 * unwinder keeps meeting frames it has not seen). */
		if ((copied & 63) == 0)
			burn_many(0.002);
		if (write(out, &c, 1) != 1)
			die("write");
		out_sum = fnv1a(&c, 1, out_sum);
		copied++;
	}
	say("copied=%ld input_offset=%lld output_offset=%lld\n", copied,
	    (long long)lseek(in, 0, SEEK_CUR), (long long)lseek(out, 0, SEEK_CUR));
	say("input_sum=%016llx output_sum=%016llx same=%s\n", (unsigned long long)in_sum,
	    (unsigned long long)out_sum, in_sum == out_sum ? "yes" : "no");
	close(in);
	close(out);
	print_fds("end");
}
