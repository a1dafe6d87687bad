/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/perfrec.h - decoding the records of a dcpi ring buffer.
 *
 * Every event dcpi opens records PERF_COLLECT_SAMPLE_TYPE with
 * sample_id_all, so every record carries (pid, tid), a CLOCK_MONOTONIC time
 * and the event's identifier.  perf_rec_parse() is pure and bounds every
 * field by the record's size: a truncated or malformed record is refused,
 * never read past (it is a fuzz target).
 */
#ifndef DCPI_COLLECT_PERFREC_H
#define DCPI_COLLECT_PERFREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum perf_rec_kind {
	PERF_REC_SAMPLE,
	PERF_REC_MMAP,          /* MMAP or MMAP2 */
	PERF_REC_COMM,
	PERF_REC_FORK,
	PERF_REC_EXIT,
	PERF_REC_LOST,          /* the ring was full: samples lost */
	PERF_REC_LOST_SAMPLES,  /* samples the PMU dropped */
	PERF_REC_THROTTLE,
	PERF_REC_UNTHROTTLE,
	PERF_REC_OTHER,         /* a record dcpi does not use */
};

#define PERF_REC_BUILD_ID_MAX 20
/* The most registers a sample may carry (PERF_SAMPLE_REGS_USER). */
#define PERF_REC_REGS_MAX 32

/*
 * What the samples of a ring carry beyond dcpi's fixed fields (identifier,
 * ip, pid/tid, time, period): the sample_type and sample_regs_user its
 * events were opened with.  Optional fields are parsed in the kernel's
 * order (call chain, user registers, user stack), so several users of the
 * collector (values, call stacks) can turn them on together.
 */
struct perf_rec_format {
	uint64_t sample_type;   /* PERF_SAMPLE_* bits */
	uint64_t regs_user;     /* sample_regs_user (with PERF_SAMPLE_REGS_USER) */
};

struct perf_rec {
	enum perf_rec_kind kind;
	uint32_t type;          /* PERF_RECORD_* */
	uint16_t misc;
	bool has_id;            /* false for records without the sample_id trailer */
	uint32_t pid, tid;
	uint64_t time;          /* CLOCK_MONOTONIC ns; 0 if the record has none */
	uint64_t id;            /* the event's identifier */
	union {
		struct {
			uint64_t ip;
			uint64_t period;
			bool kernel;    /* cpumode is kernel */
			bool user;      /* cpumode is user */
			/* PERF_SAMPLE_REGS_USER: the abi (PERF_SAMPLE_REGS_ABI_NONE: no
			 * user registers, e.g. a kernel thread) and the registers, in
			 * the bit order of regs_user */
			uint64_t regs_abi;
			unsigned n_regs;
			uint64_t regs[PERF_REC_REGS_MAX];
		} sample;
		struct {
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino;
			uint32_t prot, flags;
			bool has_build_id;
			uint8_t build_id_len;
			uint8_t build_id[PERF_REC_BUILD_ID_MAX];
			bool has_inode;     /* maj/min/ino are valid */
			const char *filename;   /* NUL-terminated, points into the record */
		} mmap;
		struct {
			const char *comm;       /* NUL-terminated, points into the record */
			bool exec;
		} comm;
		struct {
			uint32_t pid, ppid, tid, ptid;
		} task;                     /* FORK and EXIT */
		struct {
			uint64_t lost;
		} lost;
	} u;
};

/*
 * Decodes one record of len bytes (len must equal the header's size) of a
 * ring whose events record dcpi's fixed fields only.  Returns 0, or -1 with
 * *why pointing to a static reason.
 */
int perf_rec_parse(const void *rec, size_t len, struct perf_rec *out, const char **why);

/*
 * The same for a ring whose samples carry the optional fields of fmt.  A
 * sample_type with other bits than dcpi's fixed fields, CALLCHAIN,
 * REGS_USER and STACK_USER is refused, as is a register mask of more than
 * PERF_REC_REGS_MAX registers.
 */
int perf_rec_parse_fmt(const void *rec, size_t len, const struct perf_rec_format *fmt,
		       struct perf_rec *out, const char **why);

/* The time of a record, 0 if none (for ordering without a full parse). */
uint64_t perf_rec_time(const void *rec, size_t len);

#endif
