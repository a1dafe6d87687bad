/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/stopmem.c - the memory a burst reads first, copied at the stop
 * (collect/stopmem.h).
 */
#include "config.h"
#include "collect/stopmem.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define PAGE_MASK (~(uint64_t)(EMU_PAGE_SIZE - 1))
/* Addresses below this are no pointer worth a page (small integers, flags). */
#define LOWEST_POINTER 0x10000

void stopmem_init(struct stopmem *m)
{
	memset(m, 0, sizeof(*m));
	m->data = xmalloc((size_t)STOPMEM_MAX_PAGES * EMU_PAGE_SIZE);
}

void stopmem_release(struct stopmem *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Adds page p to want (n of them) unless there already or full. */
static void want_page(uint64_t *want, size_t *n, uint64_t p)
{
	p &= PAGE_MASK;
	if (p < LOWEST_POINTER || p >= EMU_USER_END || *n >= STOPMEM_MAX_PAGES)
		return;
	for (size_t i = 0; i < *n; i++)
		if (want[i] == p)
			return;
	want[(*n)++] = p;
}

size_t stopmem_take(struct stopmem *m, pid_t pid, const struct emu_state *st, const uint64_t *hint,
		    size_t n_hint)
{
	uint64_t want[STOPMEM_MAX_PAGES];
	struct iovec local[STOPMEM_MAX_PAGES], remote[STOPMEM_MAX_PAGES];
	uint64_t sp = st->regs[VREG_RSP];
	size_t n = 0, i = 0;

	m->n = 0;
	/* the stack: the red zone below rsp, then up */
	want_page(want, &n, sp - 128);
	for (unsigned k = 0; k < STOPMEM_STACK_PAGES; k++)
		want_page(want, &n, sp + (uint64_t)k * EMU_PAGE_SIZE);
	/* what the registers point into */
	for (unsigned r = 0; r < VREG_RFLAGS; r++)
		if (r != VREG_RSP)
			want_page(want, &n, st->regs[r]);
	for (size_t k = 0; k < n_hint; k++)
		want_page(want, &n, hint[k]);
	qsort(want, n, sizeof(want[0]), by_addr);
	m->asked += n;
	for (size_t k = 0; k < n; k++) {
		local[k] = (struct iovec){ m->data + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE };
		remote[k] = (struct iovec){ (void *)(uintptr_t)want[k], EMU_PAGE_SIZE };
	}
	/* One call for the lot; after a page it cannot read, again from the next. */
	while (i < n) {
		ssize_t got = process_vm_readv(pid, local + i, n - i, remote + i, n - i, 0);
		size_t whole = got > 0 ? (size_t)got / EMU_PAGE_SIZE : 0;

		for (size_t k = i; k < i + whole; k++)
			m->page[m->n++] = (struct emu_page){ want[k], true, local[k].iov_base };
		i += whole + 1;
	}
	return m->n;
}
