// SPDX-License-Identifier: MIT
/*
 * dupreceived FILE: two open file descriptions of FILE, A then X (fds 3
 * and 4); X sent to itself over a unix socket (SCM_RIGHTS) and received
 * as fd R, which the tracer has not met; then dup2(R, A's fd), which
 * makes A's fd X too, and an ftruncate through R, then through A's fd.
 * Both truncates are of X: io.csv must give them X's handle.  It prints
 * "A X R", the three fd numbers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "scmfd.h"

static int die(const char *what)
{
	perror(what);
	return 1;
}

int main(int argc, char **argv)
{
	int a, x, r, sock[2];

	if (argc != 2)
		return 2;
	a = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	x = open(argv[1], O_RDWR);
	if (a < 0 || x < 0)
		return die("open");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) < 0)
		return die("socketpair");
	if (scm_send_fd(sock[0], x) < 0)
		return die("sendmsg");
	r = scm_receive_fd(sock[1], 0);
	if (r < 0)
		return die("recvmsg");
	if (dup2(r, a) != a)
		return die("dup2");
	if (ftruncate(r, 1) < 0 || ftruncate(a, 2) < 0)
		return die("ftruncate");
	printf("%d %d %d\n", a, x, r);
	return 0;
}
