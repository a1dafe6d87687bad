/* SPDX-License-Identifier: GPL-2.0-or-later
 * dcpi-disasm-check - checks for the disasm integration tests.
 *
 *   cfg-check BINARY CALLGRIND_OUT
 *       For every procedure of BINARY that callgrind saw run, builds its CFG
 *       and frequency classes and checks them against callgrind's exact
 *       per-instruction execution counts: all blocks of one class must have
 *       run equally often.  Procedures with missing edges are skipped (and
 *       counted).  Prints a summary; exits 1 on any mismatch.
 *       (callgrind --dump-instr=yes --compress-pos=no --compress-strings=no:
 *       cost lines "ADDR LINE COUNT" under ob=/fn= headers; the line after
 *       calls= is a call's inclusive cost and is skipped.)
 *
 *   json [FILE]
 *       Validates a JSON document (RFC 8259 syntax; stdin by default):
 *       exit 0 if valid, 1 with a message if not.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "disasm/image.h"

/* ---- cfg-check ------------------------------------------------------------ */

static void read_counts(const char *path, const char *object, struct u64map *cnt)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	bool in_ob = false, skip = false;

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, l, c;

		if (!strncmp(line, "ob=", 3)) {
			line[strcspn(line, "\n")] = '\0';
			in_ob = !strcmp(line + 3, object);
		} else if (!strncmp(line, "calls=", 6)) {
			skip = true;
		} else if (!strncmp(line, "0x", 2)) {
			if (skip)
				skip = false;
			else if (in_ob && sscanf(line, "%llx %llu %llu", &a, &l, &c) == 3)
				u64map_add(cnt, a, c);
		}
	}
	fclose(f);
}

static int check_proc(struct image *img, const struct proc *p, const struct u64map *cnt,
		      size_t *classes)
{
	struct cfg cfg;
	uint64_t *seen;
	uint8_t *set;
	int bad = 0;

	if (image_cfg(img, p, &cfg))
		return 0;
	cfg_classify(&cfg);
	seen = xcalloc(cfg.n_classes + 1, sizeof(*seen));
	set = xcalloc(cfg.n_classes + 1, 1);
	for (size_t b = 0; b < cfg.exit && !(cfg.flags & CFG_MISSING_EDGES); b++) {
		const struct cfg_block *blk = &cfg.blocks[b];
		uint64_t n = 0;

		if (blk->flags & CFG_BLOCK_UNREACHABLE)
			continue;
		u64map_get(cnt, blk->start, &n);
		if (!set[blk->cls]) {
			set[blk->cls] = 1;
			seen[blk->cls] = n;
			(*classes)++;
		} else if (seen[blk->cls] != n) {
			printf("mismatch: %s block 0x%llx ran %llu times, its class %d %llu times\n",
			       p->name, (unsigned long long)blk->start, (unsigned long long)n, blk->cls,
			       (unsigned long long)seen[blk->cls]);
			bad++;
		}
	}
	free(seen);
	free(set);
	cfg_release(&cfg);
	return bad;
}

static int cmd_cfg_check(const char *binary, const char *cgout)
{
	struct u64map cnt;
	struct db_image rec;
	struct image *img;
	struct proctab *t;
	size_t checked = 0, missing = 0, classes = 0;
	int bad = 0;

	u64map_init(&cnt);
	read_counts(cgout, binary, &cnt);
	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = (char *)binary;
	img = image_open(&rec, NULL);
	t = image_procs(img);
	for (size_t i = 0; i < t->n; i++) {
		struct cfg cfg;
		uint64_t n;

		if (!u64map_get(&cnt, t->v[i].start, &n))
			continue;
		if (!image_cfg(img, &t->v[i], &cfg)) {
			bool miss = cfg.flags & CFG_MISSING_EDGES;

			cfg_release(&cfg);
			if (miss) {
				missing++;
				continue;
			}
		}
		checked++;
		bad += check_proc(img, &t->v[i], &cnt, &classes);
	}
	printf("%s: %zu procedures ran, %zu classes checked, %zu skipped (missing edges), "
	       "%d mismatches\n", binary, checked, classes, missing, bad);
	image_free(img);
	u64map_release(&cnt);
	return bad || !checked;
}

/* ---- json ------------------------------------------------------------------ */

struct jp {
	const char *p, *end;
	int depth;
};

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct jp *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
		return false;
	j->p += n;
	return true;
}

static bool string(struct jp *j)
{
	if (j->p >= j->end || *j->p++ != '"')
		return false;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (j->p >= j->end)
				return false;
			c = (unsigned char)*j->p++;
			if (c == 'u') {
				for (int k = 0; k < 4; k++)
					if (j->p >= j->end || !isxdigit((unsigned char)*j->p++))
						return false;
			} else if (!strchr("\"\\/bfnrt", c)) {
				return false;
			}
		}
	}
	return j->p < j->end && *j->p++ == '"';
}

static bool number(struct jp *j)
{
	const char *s = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || !isdigit((unsigned char)*j->p))
		return false;
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	return j->p > s;
}

static bool value(struct jp *j);

static bool container(struct jp *j, char close, bool object)
{
	j->p++;
	if (++j->depth > 256)
		return false;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		ws(j);
		if (object) {
			if (!string(j))
				return false;
			ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return false;
	}
}

static bool value(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{': return container(j, '}', true);
	case '[': return container(j, ']', false);
	case '"': return string(j);
	case 't': return lit(j, "true");
	case 'f': return lit(j, "false");
	case 'n': return lit(j, "null");
	default: return number(j);
	}
}

static int cmd_json(const char *path)
{
	FILE *f = path ? fopen(path, "r") : stdin;
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t n;
	struct jp j;
	bool ok;

	if (!f) {
		perror(path);
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (path)
		fclose(f);
	j.p = sb.buf;
	j.end = sb.buf + sb.len;
	j.depth = 0;
	ok = value(&j);
	ws(&j);
	ok = ok && j.p == j.end;
	if (!ok)
		fprintf(stderr, "invalid JSON at byte %zu\n", (size_t)(j.p - sb.buf));
	strbuf_release(&sb);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "cfg-check"))
		return cmd_cfg_check(argv[2], argv[3]);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "json"))
		return cmd_json(argc == 3 ? argv[2] : NULL);
	fprintf(stderr, "usage: dcpi-disasm-check cfg-check BINARY CALLGRIND_OUT\n"
			"       dcpi-disasm-check json [FILE]\n");
	return 2;
}
