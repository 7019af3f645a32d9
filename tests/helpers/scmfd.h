/* SPDX-License-Identifier: MIT */
/*
 * One descriptor sent over a unix socket (SCM_RIGHTS) with one byte, and
 * received: the receiver gets a number of its own for the same open file
 * description, which the tracer meets only at its first use (recvmsg is
 * not traced).  randio and dupreceived.
 */
#ifndef IOWRAP_SCMFD_H
#define IOWRAP_SCMFD_H

#include <string.h>
#include <sys/socket.h>

/* 0, or -1 with errno set. */
static inline int scm_send_fd(int sock, int fd)
{
	char byte = 'f', control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* The descriptor received (flags: recvmsg's, MSG_CMSG_CLOEXEC), or -1. */
static inline int scm_receive_fd(int sock, int flags)
{
	char byte, control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, flags) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

#endif
