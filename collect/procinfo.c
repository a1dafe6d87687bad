/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/procinfo.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *procinfo_stat(pid_t pid, char *buf, size_t size)
{
	char path[48];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (size < 2 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')) || p[1] != ' ')
		return NULL;
	return p + 2;
}

bool procinfo_status(pid_t pid, const char *key, char *value, size_t size)
{
	char path[48], line[512];
	size_t k = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *v = line + k + 1;

		if (strncmp(line, key, k) || line[k] != ':')
			continue;
		v += strspn(v, " \t");
		snprintf(value, size, "%.*s", (int)strcspn(v, "\n"), v);
		found = true;
	}
	fclose(f);
	return found;
}

int procinfo_owner(pid_t pid, uid_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	if (pid <= 0 || stat(path, &st))
		return -1;
	*uid = st.st_uid;
	return 0;
}
