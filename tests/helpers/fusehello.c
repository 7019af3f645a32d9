// SPDX-License-Identifier: MIT
/*
 * A FUSE file system served by a process of the task, as squashfuse or
 * fuse-overlayfs are in containers: fusehello MOUNTPOINT BACKING mounts
 * (root, or root of a user namespace) a directory holding one file,
 * "hello", of 4096 bytes, and serves it until unmounted.  They are a C
 * string, "./////...///x", for a task that maps the file and passes a
 * pointer into it as a path: "./x" by a name one byte short of PATH_MAX.
 * A third argument "nlink0" gives the file a link count of 0, as FUSE
 * servers that never fill it in do.
 * Nothing is cached by the kernel (entry and attribute timeouts of 0), so
 * every lookup and stat of the file is a request to this process, which
 * reads 16 bytes of BACKING for each, and for each read of the file
 * (squashfuse reads its image) before it answers.  Speaks the kernel's
 * protocol itself: no libfuse needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_ID 1
#define HELLO_ID 2
#define HELLO_SIZE 4096
#define BUF_SIZE (1 << 17)

static int dev_fd, backing_fd;
static unsigned hello_nlink = 1;
static char in[BUF_SIZE];

static void reply(uint64_t unique, int error, const void *data, size_t len)
{
	char out[sizeof(struct fuse_out_header) + HELLO_SIZE];
	struct fuse_out_header h = { .error = error, .unique = unique };

	if (len > HELLO_SIZE)
		len = HELLO_SIZE;
	h.len = (uint32_t)(sizeof(h) + len);
	memcpy(out, &h, sizeof(h));
	if (len)
		memcpy(out + sizeof(h), data, len);
	if (write(dev_fd, out, sizeof(h) + len) < 0 && errno != ENOENT)
		perror("fusehello: write");
}

/* A traced read of the task's, made before each answer about the file. */
static void read_backing(void)
{
	char buf[16];

	if (pread(backing_fd, buf, sizeof(buf), 0) < 0)
		perror("fusehello: pread");
}

static void fill_attr(uint64_t id, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = id;
	if (id == ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
		return;
	}
	read_backing();
	a->mode = S_IFREG | 0444;
	a->nlink = hello_nlink;
	a->size = HELLO_SIZE;
	a->blocks = HELLO_SIZE / 512;
}

static void on_init(uint64_t unique)
{
	struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
				   .minor = FUSE_KERNEL_MINOR_VERSION,
				   .max_write = HELLO_SIZE };

	reply(unique, 0, &o, sizeof(o));
}

static void on_lookup(const struct fuse_in_header *h, const char *name)
{
	struct fuse_entry_out o = { .nodeid = HELLO_ID };

	if (h->nodeid != ROOT_ID || strcmp(name, "hello") != 0) {
		reply(h->unique, -ENOENT, NULL, 0);
		return;
	}
	fill_attr(HELLO_ID, &o.attr);
	reply(h->unique, 0, &o, sizeof(o));
}

static void on_getattr(const struct fuse_in_header *h)
{
	struct fuse_attr_out o = { .attr_valid = 0 };

	fill_attr(h->nodeid, &o.attr);
	reply(h->unique, 0, &o, sizeof(o));
}

static void on_read(const struct fuse_in_header *h,
		    const struct fuse_read_in *r)
{
	static char data[HELLO_SIZE];
	size_t n = 0;

	read_backing();
	memset(data, '/', sizeof(data) - 2);
	data[0] = '.';
	data[sizeof(data) - 2] = 'x';
	if (r->offset < HELLO_SIZE)
		n = HELLO_SIZE - r->offset;
	if (n > r->size)
		n = r->size;
	reply(h->unique, 0, data, n);
}

/* Serves one request; false once the file system is gone. */
static int serve_one(void)
{
	const struct fuse_in_header *h = (const void *)in;
	const void *arg = in + sizeof(*h);
	struct fuse_open_out open_out = { .fh = 1 };
	struct fuse_statfs_out statfs_out;
	ssize_t n = read(dev_fd, in, sizeof(in));

	if (n < 0)
		return errno == EINTR || errno == ENOENT;
	if ((size_t)n < sizeof(*h))
		return 0;
	switch (h->opcode) {
	case FUSE_INIT:
		on_init(h->unique);
		break;
	case FUSE_LOOKUP:
		on_lookup(h, arg);
		break;
	case FUSE_GETATTR:
		on_getattr(h);
		break;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		reply(h->unique, 0, &open_out, sizeof(open_out));
		break;
	case FUSE_READ:
		on_read(h, arg);
		break;
	case FUSE_STATFS:
		memset(&statfs_out, 0, sizeof(statfs_out));
		reply(h->unique, 0, &statfs_out, sizeof(statfs_out));
		break;
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		reply(h->unique, 0, NULL, 0);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;
	case FUSE_DESTROY:
		reply(h->unique, 0, NULL, 0);
		return 0;
	default:
		reply(h->unique, -ENOSYS, NULL, 0);
	}
	return 1;
}

int main(int argc, char **argv)
{
	char opts[128];

	if (argc == 4 && strcmp(argv[3], "nlink0") == 0) {
		hello_nlink = 0;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr,
			"usage: fusehello MOUNTPOINT BACKING [nlink0]\n");
		return 2;
	}
	backing_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	dev_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (backing_fd < 0 || dev_fd < 0) {
		perror("fusehello: open");
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%d,group_id=%d", dev_fd,
		 (int)getuid(), (int)getgid());
	if (mount("fusehello", argv[1], "fuse.fusehello", MS_NOSUID | MS_NODEV,
		  opts) < 0) {
		perror("fusehello: mount");
		return 1;
	}
	while (serve_one())
		;
	return 0;
}
