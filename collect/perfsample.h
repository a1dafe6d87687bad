/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/perfsample.h - the optional fields of a sample record that come
 * after dcpi's fixed ones (PERF_COLLECT_SAMPLE_TYPE): the kernel's call
 * chain (PERF_SAMPLE_CALLCHAIN), the user registers (PERF_SAMPLE_REGS_USER)
 * and a copy of the user stack (PERF_SAMPLE_STACK_USER), in the kernel's
 * order.  Which of them are present is the events' sample_type, which the
 * collector knows (every event of a collector has the same).
 *
 * Pure and bounded like collect/perfrec.h (a fuzz target): pointers point
 * into the record.
 */
#ifndef DCPI_COLLECT_PERFSAMPLE_H
#define DCPI_COLLECT_PERFSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers one sample can carry: bits of PERF_SAMPLE_REGS_USER's mask. */
#define PERF_SAMPLE_MAX_REGS 64

struct perf_sample_ext {
	const uint64_t *callchain;      /* PERF_SAMPLE_CALLCHAIN: entries (unaligned: use memcpy) */
	size_t n_callchain;
	uint64_t regs_abi;              /* PERF_SAMPLE_REGS_ABI_*; 0: no registers (kernel thread) */
	uint64_t regs[PERF_SAMPLE_MAX_REGS];    /* indexed by register number (PERF_REG_X86_*) */
	uint64_t regs_mask;             /* the registers present */
	const uint8_t *stack;           /* PERF_SAMPLE_STACK_USER: the copied bytes */
	uint64_t stack_size;            /* bytes valid (the kernel's dyn_size) */
};

/*
 * Decodes the fields after the fixed ones of a sample record (rec, len:
 * the whole record).  sample_type and regs_mask are what the events were
 * opened with.  Returns 0, or -1 if the record is truncated or
 * inconsistent.
 */
int perf_sample_ext_parse(const void *rec, size_t len, uint64_t sample_type, uint64_t regs_mask,
			  struct perf_sample_ext *out);

#endif
