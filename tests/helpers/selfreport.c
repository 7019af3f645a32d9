// SPDX-License-Identifier: MIT
/* selfreport READ_FILE WRITE_FILE WRITE_BYTES TOUCH_MIB: reads READ_FILE
 * whole, writes WRITE_BYTES to WRITE_FILE, touches TOUCH_MIB of memory,
 * then reports what the kernel says of it: /proc/self/io (read last, in
 * one read) and VmHWM, in one write to stdout of a line:
 *   rchar wchar syscr syscw vmhwm_kib io_text_len
 * The tracer's reading at the exit stop must be exactly these values plus
 * the final read of /proc/self/io and the final write of the report. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long long field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static ssize_t read_once(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int main(int argc, char **argv)
{
	static char buf[65536], status[4096], io[1024];
	char report[256];
	long long wbytes;
	size_t mib;
	ssize_t n, io_len;
	int fd;

	if (argc != 5)
		return 2;
	fd = open(argv[1], O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	wbytes = atoll(argv[3]);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	memset(buf, 'x', sizeof(buf));
	while (fd >= 0 && wbytes > 0) {
		n = write(fd, buf,
			  wbytes < (long long)sizeof(buf) ? (size_t)wbytes :
							    sizeof(buf));
		if (n <= 0)
			return 3;
		wbytes -= n;
	}
	close(fd);
	mib = (size_t)atol(argv[4]);
	if (mib) {
		char *mem = malloc(mib << 20);

		for (size_t i = 0; mem && i < (mib << 20); i += 4096)
			mem[i] = 1;
	}
	if (read_once("/proc/self/status", status, sizeof(status)) < 0)
		return 4;
	io_len = read_once("/proc/self/io", io, sizeof(io));
	if (io_len < 0)
		return 5;
	n = snprintf(report, sizeof(report), "%llu %llu %llu %llu %llu %zd\n",
		     field(io, "rchar: "), field(io, "wchar: "),
		     field(io, "syscr: "), field(io, "syscw: "),
		     field(status, "VmHWM:"), io_len);
	return write(1, report, (size_t)n) == n ? 0 : 6;
}
