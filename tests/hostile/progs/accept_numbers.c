/*
 * accept_numbers.c — a server's socket() and accept() get the lowest free
 * numbers too.  A unix socket in the working directory; a client process
 * (its own table) connects 3000 times while burning a little between; the
 * server, burning CPU in a second thread, checks the number each accepted
 * connection gets and that a new socket() between connections gets the
 * lowest free one.  Must hold: no other number (the
 * control socket's connections and /proc reads, under --delay or CBN_CTL=1,
 * live in its thread's own descriptor table).
 */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "hostile.h"

#define ROUNDS 3000

static struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "accept.sock"};

static void client(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char b = 0;

		if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("connect");
		if (read(c, &b, 1) != 1)
			die("read");
		close(c);
		if (i % 100 == 0)
			burn_cpu(0.002);
	}
	_exit(0);
}

static void *burner(void *arg)
{
	burn_cpu_deep(0.2, 8);
	return arg;
}

int main(void)
{
	int l, bad_accept = 0, bad_socket = 0, base, st;
	pthread_t t;
	pid_t p;

	print_views("start");
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 16) < 0)
		die("listen");
	base = l + 1;
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0)
		client();
	if (pthread_create(&t, NULL, burner, NULL))
		die("pthread_create");
	for (int i = 0; i < ROUNDS; i++) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC), s;

		if (c < 0)
			die("accept");
		if (c != base)
			bad_accept++;
		s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s != base + 1)
			bad_socket++;
		close(s);
		if (write(c, "x", 1) != 1)
			die("write");
		close(c);
	}
	pthread_join(t, NULL);
	waitpid(p, &st, 0);
	close(l);
	unlink(sa.sun_path);
	say("accepted=%d other numbers: accept=%d socket=%d\n", ROUNDS, bad_accept, bad_socket);
	print_views("end");
	return 0;
}
