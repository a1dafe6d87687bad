/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/textsyms.h - procedures from text symbol lists: the kernel's
 * /proc/kallsyms (kernel and module images) and a JIT's /tmp/perf-PID.map
 * (anonymous executable memory), both stored in an epoch as auxiliary
 * files (docs/db-format.md).  Pure parsers over a buffer (fuzzable).
 */
#ifndef DCPI_DISASM_TEXTSYMS_H
#define DCPI_DISASM_TEXTSYMS_H

#include <stddef.h>

struct proctab;

/*
 * Adds the text symbols (types t, T, w, W) of a kallsyms listing
 * ("ffffffff81000000 T _stext", module symbols followed by "\t[mod]").
 * Symbols have no sizes: each extends to the next one.  Finishes tab.
 * Returns the number of symbols added, or -1 if the listing has no usable
 * addresses (all zero: read without privilege under kptr_restrict) or is
 * malformed.
 */
long kallsyms_load(struct proctab *tab, const char *buf, size_t len);

/*
 * Adds the entries of a perf map ("START SIZE name", hex without 0x) and
 * finishes tab.  Returns the number added, or -1 if a line is malformed
 * (the well-formed ones are kept).
 */
long perfmap_load(struct proctab *tab, const char *buf, size_t len);

#endif
