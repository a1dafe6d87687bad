/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replays fuzz inputs through LLVMFuzzerTestOneInput without libFuzzer.
 *
 *   fuzz-TARGET [FILE|DIR]...
 *
 * Without arguments it replays $top_srcdir/tests/fuzz/corpus/TARGET.  Prints
 * TAP: one result for the whole replay (a crash shows as a missing plan).
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the target"
#endif

static unsigned long replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	if (!f) {
		printf("# cannot open %s\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc(size > 0 ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		printf("# cannot read %s\n", path);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	replayed++;
	return 0;
}

static int replay(const char *path)
{
	struct stat st;
	struct dirent **names;
	int n, ret = 0;

	if (stat(path, &st)) {
		printf("# cannot stat %s\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char *sub;

		if (names[i]->d_name[0] != '.' && asprintf(&sub, "%s/%s", path, names[i]->d_name) > 0) {
			ret |= replay(sub);
			free(sub);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	int ret = 0;

	printf("1..1\n");
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			ret |= replay(argv[i]);
	} else {
		const char *top = getenv("top_srcdir");
		char *dir;

		if (asprintf(&dir, "%s/tests/fuzz/corpus/%s", top ? top : ".", FUZZ_TARGET) < 0)
			return 1;
		ret = replay(dir);
		free(dir);
	}
	printf("%s 1 - fuzz target %s: replayed %lu inputs\n", ret ? "not ok" : "ok", FUZZ_TARGET,
	       replayed);
	return ret ? 1 : 0;
}
