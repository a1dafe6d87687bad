/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/srcfile.c - source file lookup and line cache.
 */
#include "config.h"

#include "disasm/srcfile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/strbuf.h"
#include "core/xalloc.h"

#define SRC_MAX (64u << 20)

struct srcfile {
	char *key;              /* comp_dir NUL file, as a lookup key */
	size_t key_len;
	char *found;            /* path read, or NULL */
	char *text;             /* contents, lines NUL-terminated in place */
	char **lines;
	size_t n_lines;
};

void srcfiles_init(struct srcfiles *sf)
{
	memset(sf, 0, sizeof(*sf));
}

void srcfiles_release(struct srcfiles *sf)
{
	for (size_t i = 0; i < sf->n; i++) {
		free(sf->files[i].key);
		free(sf->files[i].found);
		free(sf->files[i].text);
		free(sf->files[i].lines);
	}
	free(sf->files);
	for (size_t i = 0; i < sf->n_subst; i++) {
		free(sf->subst[i].from);
		free(sf->subst[i].to);
	}
	free(sf->subst);
	memset(sf, 0, sizeof(*sf));
}

int srcfiles_add_subst(struct srcfiles *sf, const char *spec)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec)
		return -1;
	ALLOC_GROW(sf->subst, sf->n_subst + 1, sf->alloc_subst);
	sf->subst[sf->n_subst].from = xstrndup(spec, (size_t)(eq - spec));
	sf->subst[sf->n_subst].to = xstrdup(eq + 1);
	sf->n_subst++;
	return 0;
}

static bool read_file(const char *path, struct srcfile *f)
{
	struct stat st;
	FILE *in;
	size_t n, alloc = 0;
	char *p;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > SRC_MAX ||
	    !(in = fopen(path, "rb")))
		return false;
	f->text = xmalloc((size_t)st.st_size + 1);
	n = fread(f->text, 1, (size_t)st.st_size, in);
	fclose(in);
	f->text[n] = '\0';
	f->found = xstrdup(path);
	for (p = f->text; p < f->text + n;) {
		char *nl = memchr(p, '\n', (size_t)(f->text + n - p));

		ALLOC_GROW(f->lines, f->n_lines + 1, alloc);
		f->lines[f->n_lines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	return true;
}

/* Tries the substitutions, then the path itself. */
static void locate(struct srcfiles *sf, struct srcfile *f, const char *path)
{
	for (size_t i = 0; i < sf->n_subst; i++) {
		const struct src_subst *s = &sf->subst[i];
		size_t len = strlen(s->from);

		if (!strncmp(path, s->from, len) &&
		    (path[len] == '/' || !path[len] || s->from[len - 1] == '/')) {
			char *alt = xasprintf("%s%s", s->to, path + len);
			bool ok = read_file(alt, f);

			free(alt);
			if (ok)
				return;
		}
	}
	read_file(path, f);
}

static struct srcfile *get(struct srcfiles *sf, const char *file, const char *comp_dir)
{
	struct strbuf key = STRBUF_INIT, path = STRBUF_INIT;
	struct srcfile *f;

	strbuf_addstr(&key, comp_dir ? comp_dir : "");
	strbuf_addch(&key, '\0');
	strbuf_addstr(&key, file);
	for (size_t i = 0; i < sf->n; i++)
		if (sf->files[i].key_len == key.len && !memcmp(sf->files[i].key, key.buf, key.len)) {
			strbuf_release(&key);
			return &sf->files[i];
		}
	ALLOC_GROW(sf->files, sf->n + 1, sf->alloc);
	f = &sf->files[sf->n++];
	memset(f, 0, sizeof(*f));
	f->key_len = key.len;
	f->key = strbuf_detach(&key, NULL);
	if (file[0] != '/' && comp_dir && comp_dir[0])
		strbuf_addf(&path, "%s/%s", comp_dir, file);
	else
		strbuf_addstr(&path, file);
	locate(sf, f, path.buf);
	strbuf_release(&path);
	return f;
}

const char *srcfiles_line(struct srcfiles *sf, const char *file, const char *comp_dir,
			  uint32_t line)
{
	struct srcfile *f;

	if (!file || !line)
		return NULL;
	f = get(sf, file, comp_dir);
	return line <= f->n_lines ? f->lines[line - 1] : NULL;
}

const char *srcfiles_found_path(struct srcfiles *sf, const char *file, const char *comp_dir)
{
	return file ? get(sf, file, comp_dir)->found : NULL;
}
