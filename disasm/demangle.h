/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/demangle.h - C++ (Itanium ABI) names for display.
 *
 * Uses the C++ runtime's own demangler (__cxa_demangle from libstdc++,
 * loaded with dlopen on first use), so dcpi itself stays plain C.  Without
 * it, or for names it does not accept, names are shown as they are.
 */
#ifndef DCPI_DISASM_DEMANGLE_H
#define DCPI_DISASM_DEMANGLE_H

/* The demangled form of a mangled name (caller frees), or NULL if sym is not mangled. */
char *demangle(const char *sym);

#endif
