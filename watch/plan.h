/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/plan.h - what dcpiwatch measures and where its probes go.
 *
 * A target is a function (entry to return) or an interval (--between A B).
 * Each target becomes probe points: file offsets in an image, where the
 * kernel puts a uprobe (or kprobe: kernel functions).  A function's return
 * is seen one of two ways:
 *
 *   uretprobe   the kernel replaces the return address on the stack at
 *               entry with a trampoline's and reports the return there.
 *               One probe, cheap, but the stack holds the trampoline's
 *               address while the function runs: an exception unwinding
 *               through the function finds no unwind information for it
 *               and the C++ runtime calls std::terminate (the program
 *               aborts); a longjmp over the function leaves its return
 *               pending until the kernel notices and drops it, unreported.
 *   exits       a uprobe on each instruction that leaves the function (ret,
 *               and the jumps of tail calls), found from its control-flow
 *               graph (disasm/cfg.h).  Nothing on the stack changes, so
 *               exceptions and longjmp work; each exit costs a single-step
 *               of the probed instruction (the kernel does not emulate ret).
 *
 * The mode is chosen per function: exits when the image can raise
 * exceptions (it has a .gcc_except_table, or imports __cxa_throw or the
 * unwinder) and the function's exits are all known (no unresolved indirect
 * jumps, no conditional tail calls, no falling off its end), else
 * uretprobe; --return forces one.  Both pair an entry with its return by
 * the stack pointer (watch/agg.h), so that calls abandoned by longjmp or
 * an exception are found and counted in either mode.
 *
 * Functions are named by symbol (.symtab, .dynsym; stripped binaries by
 * their .eh_frame ranges, "IMAGE+0xADDR" as dcpiprof names them), by
 * address (0xADDR, an ELF virtual address of the image) or NAME+0xOFF.
 */
#ifndef DCPI_WATCH_PLAN_H
#define DCPI_WATCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "db/profile.h"
#include "db/watch.h"

enum watch_ret_mode { WATCH_RET_AUTO, WATCH_RET_URETPROBE, WATCH_RET_EXITS };

enum watch_role {
	WP_ENTRY,    /* a function's first instruction */
	WP_RETURN,   /* a uretprobe: the function has returned */
	WP_EXIT,     /* an instruction leaving the function (sp is the entry's again) */
	WP_FROM,     /* --between: A */
	WP_TO,       /* --between: B */
};

struct watch_point {
	unsigned target;        /* index in plan->t */
	enum watch_role role;
	const char *ksym;       /* kernel probes: the function's name */
	uint64_t offset;        /* file offset of the instruction (kernel: 0) */
	uint64_t vaddr;         /* its address in the image, for messages */
	bool stepped;           /* the kernel single-steps the instruction (not emulated) */
};

struct watch_target {
	enum watch_kind kind;
	char *spec;             /* as given: "f@/bin/x" */
	char *name;             /* "f", "push..pop" */
	char *path;             /* the image (A's) */
	char key[PROFILE_KEY_MAX + 1];
	uint64_t offset, vaddr; /* the entry (A) */
	char *path_b;           /* --between: B's image */
	char key_b[PROFILE_KEY_MAX + 1];
	uint64_t offset_b;
	char *name_b;
	enum watch_ret_mode ret;/* resolved: uretprobe or exits (functions) */
	char *ret_why;          /* why this mode (for -v and docs) */
	bool kernel;            /* a kernel function (kprobes) */
	bool entry_stepped;     /* the entry instruction is single-stepped */
	unsigned n_exits;
};

struct watch_plan {
	struct watch_target *t;
	size_t nt;
	struct watch_point *p;
	size_t np;
	pid_t pid;              /* -p: bare image names are looked up in its maps */
	char *default_image;    /* the command's executable, or /proc/PID/exe (owned) */
	enum watch_ret_mode ret;   /* --return */
	bool verbose;
};

void watch_plan_init(struct watch_plan *plan);
void watch_plan_release(struct watch_plan *plan);

/*
 * Adds a function FUNC[@IMAGE] (IMAGE: a path, a file name looked up in the
 * process's maps and the library directories, or "kernel").  Returns 0, or
 * -1 after reporting what was not found.
 */
int watch_plan_add_function(struct watch_plan *plan, const char *spec);
/* Adds --between A B (each FUNC[+0xOFF][@IMAGE] or 0xADDR[@IMAGE]: a point, not a function). */
int watch_plan_add_between(struct watch_plan *plan, const char *a, const char *b);

/* The program a command name runs ($PATH lookup, as execvp does); NULL if none (caller frees). */
char *watch_which(const char *cmd);

#endif
