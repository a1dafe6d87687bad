/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/lookup.h - finding a procedure of an epoch from what a
 * user types: a name ("memcpy", a C++ name demangled or not, "gzip+0x4a30"
 * for unnamed code), a name in one image ("memcpy@libc.so.6",
 * "main@/usr/bin/gzip"), or an address ("0x4a30", "0x4a30@gzip"; ELF
 * virtual addresses for files, kernel addresses for the kernel).  IMAGE is
 * a path, a file name or an image key, as in procprof.h.
 *
 * Only images of the epoch are searched (those it has samples for).  A
 * name that several procedures have is an error listing them, so that the
 * user can pick one with NAME@IMAGE or an address.
 */
#ifndef DCPI_CORE_ANALYSIS_LOOKUP_H
#define DCPI_CORE_ANALYSIS_LOOKUP_H

#include <stddef.h>

#include "analysis/epochview.h"

struct proc_ref {
	size_t image;             /* index into view->images */
	const struct proc *proc;  /* valid while the view is open */
};

/*
 * Finds every procedure matching spec, restricted to images matching image
 * (may be NULL; an "@IMAGE" in spec restricts further).  *out is allocated
 * (caller frees).  Returns the number found.
 */
size_t proc_lookup_all(struct epoch_view *v, const char *spec, const char *image,
		       struct proc_ref **out);

/*
 * Finds exactly one procedure.  Returns 0 with *out set, or -1 after
 * reporting "no procedure 'X' in epoch N" or "'X' is ambiguous" followed by
 * the candidates (name@image, address, samples), one per line.
 */
int proc_lookup(struct epoch_view *v, const char *spec, const char *image, struct proc_ref *out);

/* Appends "NAME@IMAGE (0xADDR)" for ref: how to name it unambiguously. */
struct strbuf;
void proc_ref_describe(const struct epoch_view *v, const struct proc_ref *ref, struct strbuf *sb);

/* The samples of ev inside the procedure (from the image's profile). */
uint64_t proc_ref_samples(struct epoch_view *v, const struct proc_ref *ref, enum dcpi_event ev);

/*
 * Parses an address as every report and view takes it: "0x401a2b" (or
 * "0X"), and with bare_hex also "401a2b" (hex without the prefix).  True
 * with *addr when s is that and nothing else.
 */
bool lookup_parse_address(const char *s, bool bare_hex, uint64_t *addr);

#endif
