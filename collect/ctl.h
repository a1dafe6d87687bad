/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/ctl.h - dcpid's control protocol and socket.
 *
 * A client (dcpictl) connects to dcpid's Unix stream socket, sends one
 * request line and reads the reply until the daemon closes the connection:
 *
 *   request  = verb [" " argument] "\n"     at most CTL_REQUEST_MAX bytes
 *   verb     = "status" [" json"] | "flush" | "epoch" [" " LABEL] | "quit"
 *   reply    = "ok\n" BODY  |  "error " MESSAGE "\n"
 *
 * Requests are printable ASCII only; a label must satisfy
 * epoch_label_valid().  ctl_parse() is a pure function (a fuzz target):
 * nothing the client sends reaches anything else unchecked.  The socket
 * lives in a root-owned directory (/run/dcpi), mode 0600 or 0660 with a
 * group; peers are checked with SO_PEERCRED (uid) and SO_PEERGROUPS.
 */
#ifndef DCPI_COLLECT_CTL_H
#define DCPI_COLLECT_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define CTL_REQUEST_MAX 128
#define CTL_DEFAULT_SOCKET "/run/dcpi/dcpid.sock"

enum ctl_verb { CTL_STATUS, CTL_FLUSH, CTL_EPOCH, CTL_QUIT };

struct ctl_request {
	enum ctl_verb verb;
	bool json;              /* status json */
	char label[65];         /* epoch LABEL, "" if none */
};

/*
 * Parses one request of len bytes (the newline included).  Returns 0, or
 * -1 with *why pointing to a static message.
 */
int ctl_parse(const char *buf, size_t len, struct ctl_request *req, const char **why);

/* Formats a request line for a client (buf of CTL_REQUEST_MAX + 1 bytes). */
int ctl_format(const struct ctl_request *req, char *buf, size_t size);

/* Who may talk to the daemon. */
struct ctl_access {
	uid_t uid;              /* the daemon's own uid (root) */
	bool has_group;
	gid_t gid;              /* --group: members may too */
};

/*
 * Creates the listening socket at path: makes its directory (0700, or 0750
 * with the group) if missing and refuses one that others can write to or
 * that is not the daemon's; refuses to replace a live socket (another
 * dcpid); binds with mode 0600 (0660 and the group with has_group).
 * Returns the fd (non-blocking), or -1 after reporting.
 */
int ctl_listen(const char *path, const struct ctl_access *acc);

/* True if the peer of a connected socket may send requests (SO_PEERCRED). */
bool ctl_peer_allowed(int fd, const struct ctl_access *acc, uid_t *peer_uid);

/*
 * Client: connects to path, sends req, and writes the reply body to out.
 * Waits at most timeout_ms for the reply (0: forever).  Returns 0 if the
 * daemon answered ok; -1 on an error reply or if it could not talk to the
 * daemon (reported).
 */
int ctl_call(const char *path, const struct ctl_request *req, FILE *out, int timeout_ms);

#endif
