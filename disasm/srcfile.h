/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/srcfile.h - source files for listings: finding them (relative
 * paths against the compilation directory, then path substitutions, as
 * gdb's "set substitute-path") and reading their lines (cached).
 */
#ifndef DCPI_DISASM_SRCFILE_H
#define DCPI_DISASM_SRCFILE_H

#include <stddef.h>
#include <stdint.h>

struct srcfile;

struct src_subst {
	char *from, *to;
};

struct srcfiles {
	struct srcfile *files;      /* cache, by recorded path */
	size_t n, alloc;
	struct src_subst *subst;    /* substitutions, in order */
	size_t n_subst, alloc_subst;
};

void srcfiles_init(struct srcfiles *sf);
void srcfiles_release(struct srcfiles *sf);

/*
 * Adds a substitution "FROM=TO": a path starting with the directory FROM
 * is looked for under TO instead (tried in the order added, before the
 * path as recorded).  -1 if spec has no '=' or an empty FROM.
 */
int srcfiles_add_subst(struct srcfiles *sf, const char *spec);

/*
 * The text of line (1-based) of file (as DWARF records it; comp_dir, may be
 * NULL, resolves a relative path), without its newline; NULL if the file
 * cannot be found or has no such line.  Files larger than 64 MiB are
 * ignored.  The string lives until release.
 */
const char *srcfiles_line(struct srcfiles *sf, const char *file, const char *comp_dir,
			  uint32_t line);

/* The path a recorded file was found at, or NULL (after srcfiles_line). */
const char *srcfiles_found_path(struct srcfiles *sf, const char *file, const char *comp_dir);

#endif
