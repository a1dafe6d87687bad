/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/demangle.c - __cxa_demangle through dlopen.
 */
#include "config.h"

#include "disasm/demangle.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

/* Names longer than this are shown mangled: the demangler recurses deeply on hostile input. */
#define DEMANGLE_MAX_INPUT 1024

static cxa_demangle_fn load(void)
{
	static bool tried;
	static cxa_demangle_fn fn;
	void *h;

	if (tried)
		return fn;
	tried = true;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&fn = dlsym(h, "__cxa_demangle");
	return fn;
}

char *demangle(const char *sym)
{
	cxa_demangle_fn fn;
	int status = 0;
	char *out;

	if (strncmp(sym, "_Z", 2) || strlen(sym) > DEMANGLE_MAX_INPUT || !(fn = load()))
		return NULL;
	out = fn(sym, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
