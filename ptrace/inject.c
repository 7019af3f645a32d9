// SPDX-License-Identifier: MIT
#include "inject.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "signals.h"
#include "tracee_mem.h"
#include "util.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define SYSCALL_INSN_LEN 2 /* 0f 05 */
#define SCRATCH_SIZE 4096
#define MAX_INSNS ((SCRATCH_SIZE - 32) / sizeof(struct sock_filter))

struct borrowed {
	pid_t tid;
	inject_wait_fn wait;
	bool at_entry;
	bool swapped; /* a call of ours replaced the task's at its entry */
	struct user_regs_struct regs; /* as the thread had them */
	uint64_t sigmask;
	bool execed; /* another thread's exec: a new program runs */
};

/*
 * The page: a cookie, then the sock_fprog and its program as the
 * tracee's seccomp() reads them (64-bit layout: the tracer is built for
 * x86_64 only).  The cookie tells the page is still ours: a task may map
 * over it, and a page taken over from a parent may be gone.
 */
struct page_head {
	uint64_t cookie, pad;
	struct sock_fprog prog;
};

static uint64_t page_cookie(void)
{
	static uint64_t cookie;

	if (!cookie)
		cookie = (uint64_t)now_realtime_us() * 0x9e3779b97f4a7c15ull ^
			 (uint64_t)getpid() ^ 1;
	return cookie;
}

/* Any page: the anonymous one the tracer mapped (a task that maps a file
 * of its own FUSE mount over it is not guarded against). */
static bool page_is_ours(pid_t tid, uint64_t page)
{
	uint64_t cookie = 0;

	return tracee_read(tid, TRACEE_ANY_PAGE, page, &cookie,
			   sizeof(cookie)) == 0 &&
	       cookie == page_cookie();
}

static int place_filter(pid_t tid, uint64_t page,
			const struct sock_filter *code, size_t len)
{
	struct page_head head = { .cookie = page_cookie() };
	size_t code_size = len * sizeof(*code);
	struct iovec local[2], remote;
	ssize_t n;

	if (len > MAX_INSNS)
		return -E2BIG;
	head.prog.len = (unsigned short)len;
	head.prog.filter =
		(struct sock_filter *)(uintptr_t)(page + sizeof(head));
	local[0] = (struct iovec){ &head, sizeof(head) };
	local[1] = (struct iovec){ (void *)code, code_size };
	remote = (struct iovec){ (void *)(uintptr_t)page,
				 sizeof(head) + code_size };
	n = process_vm_writev(tid, local, 2, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(head) + code_size ? 0 : -EFAULT;
}

static int get_regs(pid_t tid, struct user_regs_struct *regs)
{
	return ptrace(PTRACE_GETREGS, tid, 0L, regs) < 0 ? -errno : 0;
}

static int set_regs(pid_t tid, const struct user_regs_struct *regs)
{
	return ptrace(PTRACE_SETREGS, tid, 0L, regs) < 0 ? -errno : 0;
}

/* Saves the thread's registers and signal mask, and blocks its signals
 * (SIGKILL and SIGSTOP cannot be). */
static int borrow(struct borrowed *b)
{
	uint64_t all = ~0ull;

	if (get_regs(b->tid, &b->regs) < 0 ||
	    ptrace(PTRACE_GETSIGMASK, b->tid, sizeof(b->sigmask), &b->sigmask) <
		    0 ||
	    ptrace(PTRACE_SETSIGMASK, b->tid, sizeof(all), &all) < 0)
		return -errno;
	return 0;
}

/* Puts the thread back as it was: at its entry, if a call of ours took
 * the place of its own, at its syscall instruction with its syscall
 * number, to make the call again.  After another thread's exec the
 * registers are the new program's, but it keeps the signal mask. */
static void give_back(struct borrowed *b)
{
	struct user_regs_struct regs = b->regs;

	if (b->swapped) {
		regs.rip -= SYSCALL_INSN_LEN;
		regs.rax = regs.orig_rax;
	}
	if (!b->execed)
		set_regs(b->tid, &regs);
	ptrace(PTRACE_SETSIGMASK, b->tid, sizeof(b->sigmask), &b->sigmask);
}

/* Whether the two bytes before ip are a syscall instruction (0f 05): a
 * syscall stop's are, unless an exec put another program there.  Any
 * page: that instruction has just run from it, by this thread or, for a
 * new child at its first stop, by its parent, so the page is in memory,
 * or in the page cache (a new child's: a fault on it reads its file only
 * if the page was evicted since, a window not guarded against). */
static bool after_syscall_insn(pid_t tid, uint64_t ip)
{
	uint16_t insn = 0;

	return tracee_read(tid, TRACEE_ANY_PAGE, ip - SYSCALL_INSN_LEN, &insn,
			   sizeof(insn)) == 0 &&
	       insn == 0x050f;
}

/*
 * Runs the thread until the injected syscall's exit stop.  Its signals
 * are blocked, so a signal-delivery stop is SIGSTOP's (which cannot be
 * blocked), or one the injected call raised (a filter of the task's own
 * that traps it: the call failed, and the signal, ours, is dropped when
 * the caller resumes the thread).  A SIGSTOP, a group stop or another
 * thread's exec ends the injection, to be handled in the order it came;
 * a thread killed meanwhile is gone.
 */
static enum inject_result run_to_exit(struct borrowed *b,
				      struct inject_out *out)
{
	struct ptrace_syscall_info si;
	int *status = &out->status;

	for (;;) {
		unsigned event;
		int sig;

		if (ptrace(PTRACE_SYSCALL, b->tid, 0L, 0L) < 0) {
			*status = -1;
			return INJECT_GONE;
		}
		while (b->wait(b->tid, status) < 0)
			if (errno != EINTR) {
				*status = -1;
				return INJECT_GONE;
			}
		out->stops++;
		if (!WIFSTOPPED(*status))
			return INJECT_GONE;
		sig = WSTOPSIG(*status);
		event = (unsigned)*status >> 16;
		switch (event) {
		case 0:
			if (sig == (SIGTRAP | 0x80)) {
				if (tracee_syscall_info(b->tid, &si) &&
				    si.op == PTRACE_SYSCALL_INFO_EXIT)
					return INJECT_DONE;
				continue; /* its entry stop */
			}
			if (sig == SIGSTOP)
				return INJECT_STOPPED;
			out->err = -EPERM;
			return INJECT_FAILED;
		case PTRACE_EVENT_EXIT:
			return INJECT_GONE;
		case PTRACE_EVENT_EXEC:
			b->execed = true;
			return INJECT_STOPPED;
		case PTRACE_EVENT_STOP:
			/* A group stop; SIGTRAP: one ended (a notice). */
			if (is_stop_signal(sig))
				return INJECT_STOPPED;
			continue;
		default:
			/* A seccomp stop: the base filter traps seccomp(). */
			continue;
		}
	}
}

/* Back to the syscall instruction the thread stopped after, to make
 * syscall nr there: not a syscall to restart, should a signal come. */
static void rewind_to_call(struct user_regs_struct *regs, long nr)
{
	regs->rip -= SYSCALL_INSN_LEN;
	regs->rax = (unsigned long long)nr;
	regs->orig_rax = (unsigned long long)-1;
}

static void put_args(struct user_regs_struct *regs, const uint64_t a[6])
{
	regs->rdi = a[0];
	regs->rsi = a[1];
	regs->rdx = a[2];
	regs->r10 = a[3];
	regs->r8 = a[4];
	regs->r9 = a[5];
}

/*
 * Makes the thread run syscall nr(a0, a1, a2, a3, a4, a5); *ret is its
 * result.  The first call at an entry stop takes the place of the task's
 * call (which give_back() has made again); any other goes back to the
 * syscall instruction the thread stopped after.
 */
static enum inject_result call(struct borrowed *b, long nr, const uint64_t a[6],
			       long *ret, struct inject_out *out)
{
	struct user_regs_struct regs = b->regs;
	enum inject_result r;

	bool swap = b->at_entry && !b->swapped;

	if (swap)
		regs.orig_rax = (unsigned long long)nr;
	else
		rewind_to_call(&regs, nr);
	put_args(&regs, a);
	out->err = set_regs(b->tid, &regs);
	if (out->err)
		return INJECT_FAILED;
	b->swapped = b->swapped || swap;
	r = run_to_exit(b, out);
	if (r == INJECT_DONE) {
		out->err = get_regs(b->tid, &regs);
		*ret = (long)regs.rax;
		if (out->err)
			r = INJECT_FAILED;
	}
	return r;
}

static enum inject_result make_scratch(struct borrowed *b, uint64_t *scratch,
				       struct inject_out *out)
{
	const uint64_t a[6] = { 0,
				SCRATCH_SIZE,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS,
				(uint64_t)-1,
				0 };
	long ret = 0;
	enum inject_result r = call(b, SYS_mmap, a, &ret, out);

	if (r != INJECT_DONE)
		return r;
	if (ret < 0 && ret > -4096) {
		out->err = (int)ret;
		return INJECT_FAILED;
	}
	if (ret <= 0 || ((uint64_t)ret & (SCRATCH_SIZE - 1))) {
		out->err = -EFAULT; /* not an address: the call did not run */
		return INJECT_FAILED;
	}
	*scratch = (uint64_t)ret;
	return INJECT_DONE;
}

static enum inject_result add_filter(struct borrowed *b, uint64_t page,
				     struct inject_out *out)
{
	const uint64_t a[6] = { SECCOMP_SET_MODE_FILTER,
				SECCOMP_FILTER_FLAG_TSYNC |
					SECCOMP_FILTER_FLAG_SPEC_ALLOW,
				page + offsetof(struct page_head, prog),
				0,
				0,
				0 };
	long ret = 0;
	enum inject_result r = call(b, SYS_seccomp, a, &ret, out);

	if (r == INJECT_DONE && ret != 0) {
		/* TSYNC's failure is a thread id, not an errno. */
		out->err = ret < 0 ? (int)ret : -ESRCH;
		r = INJECT_FAILED;
	}
	return r;
}

static pid_t wait_stop(pid_t tid, int *status)
{
	return waitpid(tid, status, __WALL);
}

enum inject_result inject_filter(pid_t tid, bool at_entry,
				 const struct sock_filter *code, size_t len,
				 uint64_t *scratch, inject_wait_fn wait,
				 struct inject_out *out)
{
	struct borrowed b = { .tid = tid,
			      .wait = wait ? wait : wait_stop,
			      .at_entry = at_entry };
	enum inject_result r = INJECT_DONE;

	memset(out, 0, sizeof(*out));
	out->status = -1;
	out->err = borrow(&b);
	if (out->err == -ESRCH)
		return INJECT_GONE; /* killed, out of its stop: not ours now */
	if (out->err)
		return INJECT_FAILED;
	if (!after_syscall_insn(tid, b.regs.rip)) {
		out->err = -ENOEXEC;
		give_back(&b);
		return INJECT_FAILED;
	}
	/* Not ours any more (unmapped, mapped over): a new one. */
	if (*scratch && (!page_is_ours(tid, *scratch) ||
			 place_filter(tid, *scratch, code, len) < 0))
		*scratch = 0;
	if (!*scratch) {
		r = make_scratch(&b, scratch, out);
		if (r == INJECT_DONE)
			out->err = place_filter(tid, *scratch, code, len);
		if (out->err)
			r = INJECT_FAILED;
	}
	if (r == INJECT_DONE)
		r = add_filter(&b, *scratch, out);
	give_back(&b);
	return r;
}

int inject_park(pid_t tid, struct parked *p)
{
	struct borrowed b = { .tid = tid };
	struct user_regs_struct regs;
	int err = borrow(&b);

	if (err)
		return err;
	if (!after_syscall_insn(tid, b.regs.rip)) {
		give_back(&b);
		return -ENOEXEC;
	}
	/* ppoll(NULL, 0, NULL, NULL, 8): sleeps until a signal, and every
	 * one is blocked; the seize's interrupt wakes it. */
	regs = b.regs;
	rewind_to_call(&regs, SYS_ppoll);
	put_args(&regs, (const uint64_t[6]){ 0, 0, 0, 0, sizeof(uint64_t), 0 });
	err = set_regs(tid, &regs);
	if (err) {
		give_back(&b);
		return err;
	}
	p->regs = b.regs;
	p->sigmask = b.sigmask;
	return 0;
}

int inject_unpark(pid_t tid, const struct parked *p)
{
	struct user_regs_struct regs = p->regs;

	/* The interrupted ppoll is not to be made again. */
	regs.orig_rax = (unsigned long long)-1;
	if (set_regs(tid, &regs) < 0 ||
	    ptrace(PTRACE_SETSIGMASK, tid, sizeof(p->sigmask), &p->sigmask) < 0)
		return -errno;
	return 0;
}
