/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/ctl.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/meta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- the protocol ------------------------------------------------------- */

static int split(const char *buf, size_t len, char tok[2][CTL_REQUEST_MAX + 1], size_t *ntok,
		 const char **why)
{
	size_t start = 0;

	*ntok = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && buf[i] != ' ')
			continue;
		if (i == start)
			return *why = "stray space in request", -1;
		if (*ntok == 2)
			return *why = "too many words in request", -1;
		memcpy(tok[*ntok], buf + start, i - start);
		tok[(*ntok)++][i - start] = '\0';
		start = i + 1;
	}
	return 0;
}

int ctl_parse(const char *buf, size_t len, struct ctl_request *req, const char **why)
{
	char tok[2][CTL_REQUEST_MAX + 1];
	size_t ntok;

	memset(req, 0, sizeof(*req));
	if (!len || buf[len - 1] != '\n')
		return *why = "request does not end with a newline", -1;
	if (len > CTL_REQUEST_MAX)
		return *why = "request too long", -1;
	len--;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
			return *why = "request has a byte that is not printable ASCII", -1;
	if (split(buf, len, tok, &ntok, why))
		return -1;
	if (!strcmp(tok[0], "status")) {
		req->verb = CTL_STATUS;
		if (ntok == 2 && strcmp(tok[1], "json"))
			return *why = "status takes only 'json'", -1;
		req->json = ntok == 2;
	} else if (!strcmp(tok[0], "flush") || !strcmp(tok[0], "quit")) {
		req->verb = tok[0][0] == 'f' ? CTL_FLUSH : CTL_QUIT;
		if (ntok != 1)
			return *why = "flush and quit take no argument", -1;
	} else if (!strcmp(tok[0], "epoch")) {
		req->verb = CTL_EPOCH;
		if (ntok == 2) {
			if (!epoch_label_valid(tok[1]))
				return *why = "invalid epoch label (1-64 characters, no spaces, not a "
					      "number, not starting with 'latest')", -1;
			strcpy(req->label, tok[1]);
		}
	} else {
		return *why = "unknown request (status, flush, epoch or quit)", -1;
	}
	return 0;
}

int ctl_format(const struct ctl_request *req, char *buf, size_t size)
{
	static const char *const verbs[] = { "status", "flush", "epoch", "quit" };
	int n;

	if (req->verb == CTL_STATUS && req->json)
		n = snprintf(buf, size, "status json\n");
	else if (req->verb == CTL_EPOCH && req->label[0])
		n = snprintf(buf, size, "epoch %s\n", req->label);
	else
		n = snprintf(buf, size, "%s\n", verbs[req->verb]);
	return n < 0 || (size_t)n >= size || n > CTL_REQUEST_MAX ? -1 : n;
}

/* ---- the socket ---------------------------------------------------------- */

static int make_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!*path || strlen(path) >= sizeof(sa->sun_path))
		return errorf("socket path '%s' is empty or too long", path);
	strcpy(sa->sun_path, path);
	return 0;
}

/* Creates or checks the socket's directory: ours, and nobody else may write to it. */
static int check_dir(const char *path, const struct ctl_access *acc)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	struct stat st;
	int r = 0;

	if (!slash) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir) {
		slash[1] = '\0';
	} else {
		*slash = '\0';
	}
	if (mkdir(dir, acc->has_group ? 0750 : 0700) == 0) {
		if (acc->has_group && chown(dir, (uid_t)-1, acc->gid))
			r = errorf_errno("cannot give '%s' to the control group", dir);
	} else if (errno != EEXIST) {
		r = errorf_errno("cannot create the socket directory '%s'", dir);
	}
	if (!r && lstat(dir, &st))
		r = errorf_errno("cannot stat '%s'", dir);
	else if (!r && !S_ISDIR(st.st_mode))
		r = errorf("socket directory '%s' is not a directory", dir);
	else if (!r && st.st_uid != geteuid())
		r = errorf("socket directory '%s' belongs to uid %u, not to dcpid (uid %u)", dir,
			   (unsigned)st.st_uid, (unsigned)geteuid());
	else if (!r && (st.st_mode & (S_IWGRP | S_IWOTH)))
		r = errorf("socket directory '%s' is writable by others; refusing it", dir);
	free(dir);
	return r;
}

/* Removes a stale socket; refuses to replace a live one or anything else. */
static int clear_path(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : errorf_errno("cannot stat '%s'", path);
	if (!S_ISSOCK(st.st_mode))
		return errorf("'%s' exists and is not a socket; refusing to replace it", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return errorf_errno("socket");
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (!r)
		return errorf("another dcpid is listening on '%s'", path);
	if (unlink(path) && errno != ENOENT)
		return errorf_errno("cannot remove the stale socket '%s'", path);
	return 0;
}

int ctl_listen(const char *path, const struct ctl_access *acc)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd, r;

	if (make_addr(path, &sa) || check_dir(path, acc) || clear_path(path, &sa))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errorf_errno("socket");
	old = umask(0177);
	r = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r) {
		close(fd);
		return errorf_errno("cannot bind '%s'", path);
	}
	if (acc->has_group && (chown(path, (uid_t)-1, acc->gid) || chmod(path, 0660))) {
		errorf_errno("cannot open '%s' to its group", path);
		goto fail;
	}
	if (listen(fd, 16)) {
		errorf_errno("cannot listen on '%s'", path);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	unlink(path);
	return -1;
}

static bool in_groups(int fd, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

bool ctl_peer_allowed(int fd, const struct ctl_access *acc, uid_t *peer_uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	*peer_uid = (uid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred))
		return false;
	*peer_uid = cred.uid;
	if (cred.uid == 0 || cred.uid == acc->uid)
		return true;
	return acc->has_group && (cred.gid == acc->gid || in_groups(fd, acc->gid));
}

/* ---- the client ----------------------------------------------------------- */

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int ctl_call(const char *path, const struct ctl_request *req, FILE *out, int timeout_ms)
{
	struct sockaddr_un sa;
	struct strbuf sb = STRBUF_INIT;
	char line[CTL_REQUEST_MAX + 1];
	int fd, n, r = -1;

	if (make_addr(path, &sa) || (n = ctl_format(req, line, sizeof(line))) < 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return errorf_errno("socket");
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa))) {
		errorf_errno("cannot connect to dcpid at '%s'%s", path,
			     errno == ENOENT || errno == ECONNREFUSED ? " (is dcpid running?)" : "");
		goto out;
	}
	if (timeout_ms > 0) {
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (send_all(fd, line, (size_t)n) || strbuf_read_fd(&sb, fd, 16u << 20)) {
		errorf_errno("no answer from dcpid at '%s'", path);
		goto out;
	}
	if (!strncmp(sb.buf, "ok\n", 3)) {
		fwrite(sb.buf + 3, 1, sb.len - 3, out);
		r = 0;
	} else if (!strncmp(sb.buf, "error ", 6)) {
		strbuf_rtrim(&sb);
		errorf("dcpid: %s", sb.buf + 6);
	} else {
		errorf("malformed answer from dcpid at '%s'", path);
	}
out:
	close(fd);
	strbuf_release(&sb);
	return r;
}
