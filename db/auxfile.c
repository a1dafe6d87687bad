/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/auxfile.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "db/db-int.h"
#include "db/db.h"
#include "db/fsio.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool db_aux_name_valid(const char *name)
{
	size_t n = strlen(name);
	static const char ok[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

	if (!n || n > 100 || name[0] == '.' || strspn(name, ok) != n)
		return false;
	if (!strcmp(name, META_NAME) || !strcmp(name, IMAGES_NAME))
		return false;
	if ((n > 5 && !strcmp(name + n - 5, PROFILE_SUFFIX)) ||
	    (n > 8 && !strcmp(name + n - 8, CORRUPT_SUFFIX)))
		return false;
	return true;
}

static int aux_store(struct db *db, uint32_t seq, const char *name, const void *data, size_t len,
		     unsigned mode)
{
	char *what;
	int fd, r;

	db_need_writer(db);
	if (!db_aux_name_valid(name))
		return errorf("invalid auxiliary file name '%s'", name);
	if ((fd = db_open_epoch(db, seq)) < 0)
		return -1;
	what = db_epoch_file_path(db, seq, name);
	r = fsio_write_atomic_mode(fd, name, what, data, len, db_sync_enabled(db), mode);
	close(fd);
	free(what);
	return r;
}

int db_aux_store(struct db *db, uint32_t seq, const char *name, const void *data, size_t len)
{
	return aux_store(db, seq, name, data, len, FSIO_FILE_MODE);
}

int db_aux_store_values(struct db *db, uint32_t seq, const char *name, const void *data,
			size_t len)
{
	return aux_store(db, seq, name, data, len, db->values_mode ? db->values_mode : FSIO_VALUES_MODE);
}

static bool aux_with_prefix(const char *name, const void *prefix)
{
	return !strncmp(name, prefix, strlen(prefix)) && db_aux_name_valid(name);
}

int db_aux_list(struct db *db, uint32_t seq, const char *prefix, char ***names, size_t *n)
{
	return db_epoch_names(db, seq, aux_with_prefix, prefix, names, n);
}

int db_aux_remove(struct db *db, uint32_t seq, const char *name)
{
	int fd, r = 0;

	db_need_writer(db);
	if (!db_aux_name_valid(name))
		return errorf("invalid auxiliary file name '%s'", name);
	if ((fd = db_open_epoch(db, seq)) < 0)
		return -1;
	if (unlinkat(fd, name, 0) && errno != ENOENT)
		r = errorf_errno("cannot remove '%s' from epoch %" PRIu32, name, seq);
	close(fd);
	return r;
}

int db_aux_load(struct db *db, uint32_t seq, const char *name, size_t max, struct strbuf *out)
{
	if (!db_aux_name_valid(name))
		return errorf("invalid auxiliary file name '%s'", name);
	return db_epoch_read(db, seq, name, max, out);
}
