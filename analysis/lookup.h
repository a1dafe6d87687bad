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
 * The IMAGE of a NAME@IMAGE spec (after its last '@') when NAME is not
 * empty and IMAGE names an image of the epoch, with NAME's length in
 * *name_len; else NULL (spec is a name, or an address, as it stands).
 */
const char *proc_spec_image(const struct epoch_view *v, const char *spec, size_t *name_len);

/*
 * Finds every procedure matching spec, restricted to images matching image
 * (may be NULL; an "@IMAGE" in spec restricts further).  A spec that
 * splits as NAME@IMAGE (proc_spec_image()) is NAME in those images; only
 * if none has it is the whole spec a name (a versioned symbol's "f@VER")
 * in every image.  *out is allocated (caller frees).  Returns the number
 * found.
 */
size_t proc_lookup_all(struct epoch_view *v, const char *spec, const char *image,
		       struct proc_ref **out);

/*
 * Finds exactly one procedure.  Returns 0 with *out set, or -1 after
 * reporting "no procedure 'X' in epoch N" or "'X' is ambiguous" followed by
 * the candidates (name@image, address, samples), one per line.
 */
int proc_lookup(struct epoch_view *v, const char *spec, const char *image, struct proc_ref *out);

/*
 * Why a lookup found no single procedure, in parts, for views that lay
 * them out: what went wrong, the clauses that say why or what to do, and
 * the candidates, a line each.  All terminal-safe.
 */
enum lookup_failure_kind {
	LOOKUP_FOUND,       /* exactly one: no failure */
	LOOKUP_NO_IMAGE,    /* the image it was restricted to is not in the epoch */
	LOOKUP_NO_PROC,     /* nothing by that name (clauses: images that have no names) */
	LOOKUP_AMBIGUOUS,   /* several (a clause on how to choose; items: the candidates) */
};

struct lookup_failure {
	enum lookup_failure_kind kind;
	char *what;         /* "no procedure 'x' in epoch 1", "'x' is ambiguous (2 procedures)" */
	char **clauses;     /* "'bin/gone' cannot be named: why", "say NAME@IMAGE or give an address:" */
	size_t n_clauses;
	char **items;       /* "x@bin/prog (0x401060), 4130 cycles samples", ..., "... and 3 more" */
	size_t n_items;
};

/*
 * proc_lookup() without reporting: returns 0 with *out set, or -1 with *f
 * saying why (released with lookup_failure_release(), also on success).
 */
int proc_lookup_why(struct epoch_view *v, const char *spec, const char *image,
		    struct proc_ref *out, struct lookup_failure *f);
/* The message proc_lookup() reports: what; clause; clause, then "\n  item" for each item. */
struct strbuf;
void lookup_failure_text(const struct lookup_failure *f, struct strbuf *sb);
/* The same a part a line ("what;", "clause;", ..., "clause", "item", ...), for views. */
void lookup_failure_lines(const struct lookup_failure *f, struct strbuf *sb);
void lookup_failure_release(struct lookup_failure *f);

/* Appends "NAME@IMAGE (0xADDR)" for ref: how to name it unambiguously. */
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
