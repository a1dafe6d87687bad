/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/image.h - an image of a profile database, as the readers see it:
 * what its profile offsets mean, its procedures, its code (decoded, with
 * control-flow graphs) and its source lines.  Built on the image record of
 * an epoch (db/image.h) and docs/db-format.md "What an offset means".
 *
 *   kind      names from                          code
 *   file      the binary (+ debug file)           the binary
 *   vdso      the running kernel's vdso           the running kernel's vdso
 *   kernel    the epoch's kallsyms aux file       none
 *   module    the epoch's kallsyms aux file       none
 *   anon      the epoch's perf-PID.map aux file   none
 *   unknown   nothing                             none
 *
 * Binaries are looked for in the database's binaries/BUILD-ID snapshots,
 * then at the recorded path.  A binary is verified against the record: the
 * build-id if the record has one, else size and mtime.  A binary that is
 * missing leaves image-level reports working (state IMAGE_MISSING); one
 * that changed (IMAGE_CHANGED) is not used for names or code unless forced
 * (opts.force), since its offsets may mean other code now.
 *
 * Debug files are found by build-id (DEBUG_DIR/.build-id/xx/yyyy.debug)
 * and by .gnu_debuglink (next to the binary, in .debug/ there, and under
 * DEBUG_DIR), and verified (build-id, else the debuglink CRC).  DEBUG_DIR
 * is opts.debug_dir, else $DCPI_DEBUG_DIR, else /usr/lib/debug.
 *
 * Everything is lazy: image_open() reads the ELF headers and notes only;
 * procedures are read on the first lookup, DWARF on the first source
 * query, and code one procedure at a time.
 *
 * Memory that does not grow with the database: the image of a file is
 * shared by every epoch that profiled it (image_open() of the same record,
 * database and options returns the same image, counted: image_free()
 * drops a reference), and at most a few dozen binaries stay open (mapped)
 * at once: the least recently used are closed, and opened again when
 * their code is read (one replaced since is not used: reads and decoding
 * fail).  What is kept of a closed binary is what is needed without its
 * bytes: its segments and whether it has code.  Decoders are one per
 * thread (image_decoder()).  An image is used by one thread at a time,
 * but image_read() may be called from any thread.
 *
 * Addresses ("addr") are those of the image's own address space: ELF
 * virtual addresses for files and the vdso (as objdump shows them), kernel
 * virtual addresses for kernel and module images, process addresses for
 * anon images.  Offsets are what profiles store.
 */
#ifndef DCPI_DISASM_IMAGE_H
#define DCPI_DISASM_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/image.h"
#include "disasm/cfg.h"
#include "disasm/dwarf.h"
#include "disasm/insn.h"
#include "disasm/proctab.h"

struct db;

enum image_state {
	IMAGE_OK,           /* names and code */
	IMAGE_NAMES_ONLY,   /* names, no code: kernel, module, JIT, unsupported architecture */
	IMAGE_MISSING,      /* no binary (or no kallsyms / perf map): image-level reports only */
	IMAGE_CHANGED,      /* the binary is not the one profiled (unless forced: then usable, with a warning) */
	IMAGE_UNREADABLE,   /* the binary cannot be read as ELF */
	IMAGE_NOTHING,      /* the unknown image: samples that no image holds */
};

struct image_opts {
	struct db *db;              /* aux files and binaries/ snapshots; may be NULL */
	uint32_t seq;               /* the epoch */
	const char *kernel_release; /* the epoch's kernel (meta.kernel) for the vdso check; may be NULL */
	const char *debug_dir;      /* NULL: $DCPI_DEBUG_DIR, else /usr/lib/debug */
	bool force;                 /* use a changed binary anyway */
};

struct decoder;
struct elffile;
struct image_private;

struct image {
	struct db_image rec;        /* copy of the record (path owned) */
	enum image_state state;
	char *why;                  /* a sentence when state is not IMAGE_OK, or the warning of a forced binary */
	bool forced;                /* IMAGE_CHANGED used anyway: names and code work */
	char *bin_path;             /* the file read, or NULL */
	/*
	 * A file deleted while it ran (the kernel's "PATH (deleted)"): "PATH,
	 * deleted since; snapshot kept" (named from the database's snapshot)
	 * or "...; no snapshot" (IMAGE_MISSING, and why says the same); the
	 * made-up path is never opened.  NULL otherwise.
	 */
	char *deleted;
	char *dbg_path;             /* separate debug file, or NULL (valid after symbols or DWARF are loaded) */
	const char *base;           /* last component of the path, names unnamed ranges */
	enum insn_arch arch;
	bool syms_bad;              /* symbols could not be (fully) read ... */
	char *syms_why;             /* ... and why ("cannot read symbols of 'X': ...") */
	struct image_private *priv;
};

/* Opens an image of an epoch.  Never fails: problems show in state and why. */
struct image *image_open(const struct db_image *rec, const struct image_opts *opts);
void image_free(struct image *img);

/* "ok", "names-only", "missing", "changed", "unreadable", "nothing". */
const char *image_state_name(enum image_state state);

/*
 * Reads the procedures (done on first use by the lookups below).  Returns
 * 0, or -1 if they could not be read (img->syms_why says why; whatever was
 * read is kept, and everything else keeps working).
 */
int image_load_procs(struct image *img);

/* The procedure table (loads it); empty when there are no names. */
struct proctab *image_procs(struct image *img);

/* Profile offset -> address and back; false if the offset maps nowhere. */
bool image_offset_to_addr(const struct image *img, uint64_t offset, uint64_t *addr);
bool image_addr_to_offset(const struct image *img, uint64_t addr, uint64_t *offset);

/*
 * The procedure holding addr, or NULL.  Code between procedures of an
 * executable section becomes a PROC_GAP procedure (named IMAGE+0xADDR)
 * on demand; its pointer stays valid until image_free().
 */
const struct proc *image_proc_at(struct image *img, uint64_t addr);

/* Procedures named name (see proctab_by_name); also IMAGE+0xADDR names of gaps. */
size_t image_procs_by_name(struct image *img, const char *name, const struct proc **out,
			   size_t max);

/*
 * The name shown for samples no procedure holds: "[unknown]" when the
 * image has names, else why there are none: "[no binary]",
 * "[changed binary]", "[no symbols]", "[kernel]" (no kallsyms).
 */
const char *image_unnamed(struct image *img);

/* True if instructions can be shown; else *why (if why) says why not. */
bool image_has_code(const struct image *img, const char **why);

/* Reads size bytes of code or data at addr; 0, or -1 if not in the file. */
int image_read(struct image *img, uint64_t addr, void *buf, size_t size);

/*
 * Decodes the instructions of p (linear sweep over [p->start, p->end)).
 * *v is allocated (caller frees).  Returns -1 (reported) if the image has
 * no code.
 */
int image_decode(struct image *img, const struct proc *p, struct insn **v, size_t *n);

/*
 * Decodes p and builds its control-flow graph (calls to noreturn functions
 * end blocks; jump tables are read from the image).  The cfg is not
 * classified: call cfg_classify().  Release with cfg_release().  -1 if the
 * image has no code.
 */
int image_cfg(struct image *img, const struct proc *p, struct cfg *cfg);

/* True if a call to addr never returns (by name, or by analysing the callee). */
bool image_noreturn(struct image *img, uint64_t addr);

/*
 * Lets go of what building CFGs keeps to be quicker next time (which
 * callees return, instructions decoded for a CFG not built yet): for a
 * caller done with the image's procedures (10,000 images analysed keep
 * tens of MB of it).  Found again if asked for.  No other thread may be
 * building a CFG of img.
 */
void image_forget_cfgs(struct image *img);

/*
 * The image's DWARF (opened on first use, from the binary or its debug
 * file), or NULL if there is none or it cannot be read (*why, if why, says
 * which: NULL for none).
 */
struct dwarf_info *image_dwarf(struct image *img, const char **why);

/* A decoder of this image's architecture: this thread's (decoder_of_thread()). */
struct decoder *image_decoder(struct image *img);

#endif
