// SPDX-License-Identifier: MIT
/*
 * kernelaio MODE FILE: reads the first 4 KiB of FILE through the kernel's
 * asynchronous interfaces, with raw syscalls (no liburing or libaio):
 *   aio        io_setup, io_submit of one IOCB_CMD_PREAD, io_getevents
 *   aio-write  the same with IOCB_CMD_PWRITE of "ABCDE" at offset 0 of
 *              FILE, opened O_WRONLY|O_CREAT (no O_TRUNC)
 *   uring      io_uring_setup and an io_uring_enter that submits nothing
 * and prints what the read or write returned (aio) or the setup's result
 * (uring: a kernel may refuse io_uring, kernel.io_uring_disabled).  None
 * is a read(2) or write(2): the tracer sees the calls, not the bytes.
 */
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int submit_aio(int fd, uint16_t opcode)
{
	static char buf[4096] = "ABCDE";
	aio_context_t ctx = 0;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;

	if (syscall(SYS_io_setup, 4, &ctx) < 0) {
		perror("io_setup");
		return 1;
	}
	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = opcode;
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_buf = (uint64_t)(uintptr_t)buf;
	cb.aio_nbytes = opcode == IOCB_CMD_PWRITE ? 5 : sizeof(buf);
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1 ||
	    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) {
		perror("io_submit");
		return 1;
	}
	printf("%lld\n", (long long)ev.res);
	return syscall(SYS_io_destroy, ctx) < 0;
}

static int enter_uring(void)
{
	struct io_uring_params p;
	long ring;

	memset(&p, 0, sizeof(p));
	ring = syscall(SYS_io_uring_setup, 4, &p);
	printf("%ld\n", ring < 0 ? -1L : 0L);
	if (ring < 0)
		return 0;
	if (syscall(SYS_io_uring_enter, (int)ring, 0, 0, 0, NULL, 0) < 0) {
		perror("io_uring_enter");
		return 1;
	}
	return close((int)ring) < 0;
}

int main(int argc, char **argv)
{
	bool write;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: kernelaio aio|aio-write|uring FILE\n");
		return 2;
	}
	write = !strcmp(argv[1], "aio-write");
	fd = write ? open(argv[2], O_WRONLY | O_CREAT, 0644) :
		     open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "aio") || write)
		return submit_aio(fd, write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD);
	if (!strcmp(argv[1], "uring"))
		return enter_uring();
	fprintf(stderr, "kernelaio: unknown mode %s\n", argv[1]);
	return 2;
}
