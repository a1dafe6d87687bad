/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/helper/mdwe-filter.h - the seccomp filter systemd installs for a
 * unit's MemoryDenyWriteExecute=yes (systemd 252, seccomp-util.c's
 * seccomp_memory_deny_write_execute): mmap with PROT_WRITE and PROT_EXEC
 * together, mprotect and pkey_mprotect with PROT_EXEC, shmat with SHM_EXEC
 * fail with EPERM; everything else is allowed.  Tests put a program under
 * it where systemd is not PID 1, as dcpid.service would.
 */
#ifndef DCPI_TESTS_MDWE_FILTER_H
#define DCPI_TESTS_MDWE_FILTER_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>

/* Installs it on the calling thread and its future children (no_new_privs first): 0, or -1. */
static inline int mdwe_filter_install(void)
{
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
		/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 3 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 8, 7),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 1, 0),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 0, 2),
		/* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 4, 3),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_shmat, 0, 2),
		/* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		/* 11 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SHM_EXEC, 1, 0),
		/* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 13 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -1;
	return 0;
}

#endif
