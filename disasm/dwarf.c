/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/dwarf.c - line tables and inlined subroutines through libdwarf.
 *
 * Compatibility: the libdwarf calls that differ between the 2021 API
 * (Debian 12) and the 0.x/2.x API are wrapped in compat_*() below;
 * everything else has the same signature in both (checked by compiling
 * against libdwarf 2.3.2's header).
 */
#include "config.h"

#include "disasm/dwarf.h"

#include DCPI_DWARF_HEADER
#include DCPI_DWARF_DWARF_H
#include <stdlib.h>
#include <string.h>

#include "core/u64map.h"
#include "core/xalloc.h"

#define MAX_DIE_DEPTH 64
#define MAX_DIES_WALKED 2000000
#define MAX_FILENO 65536

/* ---- compatibility ------------------------------------------------------- */

static int compat_init(const char *path, Dwarf_Debug *dbg, Dwarf_Error *err)
{
#ifdef HAVE_LIBDWARF_0X
	return dwarf_init_path(path, NULL, 0, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, err);
#else
	return dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg,
			       NULL, 0, NULL, err);
#endif
}

static void compat_finish(Dwarf_Debug dbg)
{
#ifdef HAVE_LIBDWARF_0X
	dwarf_finish(dbg);
#else
	dwarf_finish(dbg, NULL);
#endif
}

static void compat_ranges_dealloc(Dwarf_Debug dbg, Dwarf_Ranges *ranges, Dwarf_Signed n)
{
#ifdef HAVE_LIBDWARF_0X
	dwarf_dealloc_ranges(dbg, ranges, n);
#else
	dwarf_ranges_dealloc(dbg, ranges, n);
#endif
}

/* Advances to the next CU header (fallback indexing only). */
static int compat_next_cu(Dwarf_Debug dbg, Dwarf_Half *version, Dwarf_Error *err)
{
	Dwarf_Unsigned len = 0, typeoff = 0, next = 0;
	Dwarf_Half addrsize = 0, lensize = 0, extsize = 0, cutype = 0;
	Dwarf_Off abbrev = 0;
	Dwarf_Sig8 sig;

	return dwarf_next_cu_header_d(dbg, 1, &len, version, &abbrev, &addrsize, &lensize,
				      &extsize, &sig, &typeoff, &next, &cutype, err);
}

/* ---- state ---------------------------------------------------------------- */

struct cu {
	Dwarf_Off off;          /* offset of the CU DIE in .debug_info */
	bool loaded, bad;
	Dwarf_Half version;
	struct src_line *rows;
	size_t n_rows;
	const char *comp_dir;
	const char **srcfiles;  /* for DW_AT_call_file, loaded with the inlines */
	size_t n_srcfiles;
	bool srcfiles_loaded;
};

struct cu_range {
	uint64_t lo, hi;
	size_t cu;
};

struct dwarf_info {
	Dwarf_Debug dbg;
	bool indexed, index_bad;
	struct cu *cus;
	size_t n_cus, alloc_cus;
	struct u64map cu_by_off;
	struct cu_range *ranges;
	size_t n_ranges, alloc_ranges;
	char **strs;            /* owned strings */
	size_t n_strs, alloc_strs;
	size_t walked;          /* DIEs walked by the current query */
};

static const char *keep(struct dwarf_info *dw, const char *s)
{
	ALLOC_GROW(dw->strs, dw->n_strs + 1, dw->alloc_strs);
	dw->strs[dw->n_strs] = xstrdup(s);
	return dw->strs[dw->n_strs++];
}

static void drop_err(struct dwarf_info *dw, Dwarf_Error *err)
{
	if (*err) {
		dwarf_dealloc_error(dw->dbg, *err);
		*err = NULL;
	}
}

struct dwarf_info *dwarf_info_open(const char *path, const char **why)
{
	Dwarf_Debug dbg = NULL;
	Dwarf_Error err = NULL;
	struct dwarf_info *dw;
	int r = compat_init(path, &dbg, &err);

	*why = NULL;
	if (r != DW_DLV_OK && err)
		dwarf_dealloc_error(dbg, err);  /* NULL dbg: libdwarf frees its own error */
	if (r == DW_DLV_NO_ENTRY)
		return NULL;
	if (r != DW_DLV_OK) {
		*why = "malformed DWARF";
		if (dbg)
			compat_finish(dbg);
		return NULL;
	}
	dw = XNEW(struct dwarf_info);
	dw->dbg = dbg;
	u64map_init(&dw->cu_by_off);
	return dw;
}

void dwarf_info_close(struct dwarf_info *dw)
{
	if (!dw)
		return;
	for (size_t i = 0; i < dw->n_cus; i++) {
		free(dw->cus[i].rows);
		free(dw->cus[i].srcfiles);
	}
	free(dw->cus);
	free(dw->ranges);
	u64map_release(&dw->cu_by_off);
	for (size_t i = 0; i < dw->n_strs; i++)
		free(dw->strs[i]);
	free(dw->strs);
	compat_finish(dw->dbg);
	free(dw);
}

/* ---- DIE helpers ---------------------------------------------------------- */

static bool die_udata(struct dwarf_info *dw, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *v)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Error err = NULL;
	bool ok = false;

	if (dwarf_attr(die, at, &attr, &err) == DW_DLV_OK) {
		ok = dwarf_formudata(attr, v, &err) == DW_DLV_OK;
		dwarf_dealloc_attribute(attr);
	}
	drop_err(dw, &err);
	return ok;
}

static bool die_ref(struct dwarf_info *dw, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Error err = NULL;
	bool ok = false;

	if (dwarf_attr(die, at, &attr, &err) == DW_DLV_OK) {
		ok = dwarf_global_formref(attr, off, &err) == DW_DLV_OK;
		dwarf_dealloc_attribute(attr);
	}
	drop_err(dw, &err);
	return ok;
}

static const char *die_string(struct dwarf_info *dw, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Error err = NULL;
	char *s = NULL;
	const char *out = NULL;

	if (dwarf_attr(die, at, &attr, &err) == DW_DLV_OK) {
		if (dwarf_formstring(attr, &s, &err) == DW_DLV_OK && s)
			out = keep(dw, s);
		dwarf_dealloc_attribute(attr);
	}
	drop_err(dw, &err);
	return out;
}

struct range_buf {
	struct cu_range *v;     /* cu field unused here */
	size_t n, alloc;
};

static void rb_add(struct range_buf *rb, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	ALLOC_GROW(rb->v, rb->n + 1, rb->alloc);
	rb->v[rb->n].lo = lo;
	rb->v[rb->n].hi = hi;
	rb->v[rb->n].cu = 0;
	rb->n++;
}

/* DWARF 5 .debug_rnglists through libdwarf's cooked values. */
static void rnglists(struct dwarf_info *dw, Dwarf_Attribute attr, Dwarf_Half form,
		     struct range_buf *rb)
{
	Dwarf_Unsigned val = 0, count = 0, goff = 0;
	Dwarf_Rnglists_Head head = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Off off = 0;
	int r;

	if (form == DW_FORM_rnglistx) {
		r = dwarf_formudata(attr, &val, &err);
	} else {
		r = dwarf_global_formref(attr, &off, &err);
		val = off;
	}
	if (r != DW_DLV_OK ||
	    dwarf_rnglists_get_rle_head(attr, form, val, &head, &count, &goff, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return;
	}
	for (Dwarf_Unsigned i = 0; i < count && i < 100000; i++) {
		unsigned len = 0, code = 0;
		Dwarf_Unsigned raw1, raw2, c1 = 0, c2 = 0;
		Dwarf_Bool unavailable = 0;

		if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &unavailable,
						      &c1, &c2, &err) != DW_DLV_OK) {
			drop_err(dw, &err);
			break;
		}
		if (unavailable)
			continue;
		if (code == DW_RLE_offset_pair || code == DW_RLE_start_end ||
		    code == DW_RLE_start_length || code == DW_RLE_startx_endx ||
		    code == DW_RLE_startx_length)
			rb_add(rb, c1, c2);
	}
	dwarf_dealloc_rnglists_head(head);
}

/* DWARF 2-4 .debug_ranges, relative to the CU base address. */
static void debug_ranges(struct dwarf_info *dw, Dwarf_Die die, Dwarf_Attribute attr,
			 uint64_t base, struct range_buf *rb)
{
	Dwarf_Off off = 0, real = 0;
	Dwarf_Ranges *ranges = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Unsigned bytes = 0;
	Dwarf_Error err = NULL;

	if (dwarf_global_formref(attr, &off, &err) != DW_DLV_OK ||
	    dwarf_get_ranges_b(dw->dbg, off, die, &real, &ranges, &n, &bytes, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return;
	}
	for (Dwarf_Signed i = 0; i < n && i < 100000; i++) {
		const Dwarf_Ranges *r = &ranges[i];

		if (r->dwr_type == DW_RANGES_ENTRY)
			rb_add(rb, base + r->dwr_addr1, base + r->dwr_addr2);
		else if (r->dwr_type == DW_RANGES_ADDRESS_SELECTION)
			base = r->dwr_addr2;
		else
			break;
	}
	compat_ranges_dealloc(dw->dbg, ranges, n);
}

/* The address ranges of a DIE (low/high pc or DW_AT_ranges). */
static void die_ranges(struct dwarf_info *dw, Dwarf_Die die, uint64_t cu_base,
		       struct range_buf *rb)
{
	Dwarf_Addr lo = 0, hi = 0;
	Dwarf_Half form = 0, version = 0, offsize = 0;
	enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
	Dwarf_Attribute attr = NULL;
	Dwarf_Error err = NULL;

	rb->n = 0;
	if (dwarf_lowpc(die, &lo, &err) == DW_DLV_OK &&
	    dwarf_highpc_b(die, &hi, &form, &cls, &err) == DW_DLV_OK) {
		if (cls == DW_FORM_CLASS_CONSTANT)
			hi += lo;
		rb_add(rb, lo, hi);
		return;
	}
	drop_err(dw, &err);
	if (dwarf_attr(die, DW_AT_ranges, &attr, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return;
	}
	if (dwarf_whatform(attr, &form, &err) == DW_DLV_OK) {
		dwarf_get_version_of_die(die, &version, &offsize);
		if (version >= 5)
			rnglists(dw, attr, form, rb);
		else
			debug_ranges(dw, die, attr, cu_base, rb);
	}
	drop_err(dw, &err);
	dwarf_dealloc_attribute(attr);
}

/* ---- the CU index ---------------------------------------------------------- */

static size_t cu_for_offset(struct dwarf_info *dw, Dwarf_Off off)
{
	uint64_t *slot = u64map_slot(&dw->cu_by_off, off);

	if (!*slot) {
		ALLOC_GROW(dw->cus, dw->n_cus + 1, dw->alloc_cus);
		memset(&dw->cus[dw->n_cus], 0, sizeof(dw->cus[0]));
		dw->cus[dw->n_cus].off = off;
		*slot = ++dw->n_cus;
	}
	return (size_t)(*slot - 1);
}

static void add_cu_range(struct dwarf_info *dw, uint64_t lo, uint64_t hi, size_t cu)
{
	if (hi <= lo)
		return;
	ALLOC_GROW(dw->ranges, dw->n_ranges + 1, dw->alloc_ranges);
	dw->ranges[dw->n_ranges].lo = lo;
	dw->ranges[dw->n_ranges].hi = hi;
	dw->ranges[dw->n_ranges].cu = cu;
	dw->n_ranges++;
}

static bool index_aranges(struct dwarf_info *dw)
{
	Dwarf_Arange *ar = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error err = NULL;

	if (dwarf_get_aranges(dw->dbg, &ar, &n, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return false;
	}
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Unsigned seg = 0, segsize = 0, len = 0;
		Dwarf_Addr start = 0;
		Dwarf_Off cuoff = 0;

		if (dwarf_get_arange_info_b(ar[i], &seg, &segsize, &start, &len, &cuoff, &err) ==
		    DW_DLV_OK)
			add_cu_range(dw, start, start + len, cu_for_offset(dw, cuoff));
		drop_err(dw, &err);
		dwarf_dealloc(dw->dbg, ar[i], DW_DLA_ARANGE);
	}
	dwarf_dealloc(dw->dbg, ar, DW_DLA_LIST);
	return dw->n_ranges > 0;
}

/* Without .debug_aranges: walk the CU headers and read each CU DIE's ranges. */
static void index_cus(struct dwarf_info *dw)
{
	Dwarf_Error err = NULL;
	Dwarf_Half version = 0;
	struct range_buf rb = { NULL, 0, 0 };
	size_t guard = 0;

	while (compat_next_cu(dw->dbg, &version, &err) == DW_DLV_OK && guard++ < 1000000) {
		Dwarf_Die die = NULL;
		Dwarf_Off off = 0;
		Dwarf_Addr base = 0;
		size_t cu;

		if (dwarf_siblingof_b(dw->dbg, NULL, 1, &die, &err) != DW_DLV_OK) {
			drop_err(dw, &err);
			dw->index_bad = true;
			break;
		}
		if (dwarf_dieoffset(die, &off, &err) == DW_DLV_OK) {
			cu = cu_for_offset(dw, off);
			if (dwarf_lowpc(die, &base, &err) != DW_DLV_OK)
				base = 0;
			drop_err(dw, &err);
			die_ranges(dw, die, base, &rb);
			for (size_t i = 0; i < rb.n; i++)
				add_cu_range(dw, rb.v[i].lo, rb.v[i].hi, cu);
		}
		drop_err(dw, &err);
		dwarf_dealloc_die(die);
	}
	drop_err(dw, &err);
	free(rb.v);
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void build_index(struct dwarf_info *dw)
{
	if (dw->indexed)
		return;
	dw->indexed = true;
	if (!index_aranges(dw))
		index_cus(dw);
	if (dw->n_ranges > 1)
		qsort(dw->ranges, dw->n_ranges, sizeof(*dw->ranges), range_cmp);
}

/* CUs whose ranges overlap [lo, hi), deduplicated, into out (caller frees). */
static size_t cus_overlapping(struct dwarf_info *dw, uint64_t lo, uint64_t hi, size_t **out)
{
	size_t n = 0, alloc = 0;

	*out = NULL;
	build_index(dw);
	for (size_t i = 0; i < dw->n_ranges && dw->ranges[i].lo < hi; i++) {
		bool dup = false;

		if (dw->ranges[i].hi <= lo)
			continue;
		for (size_t k = 0; k < n; k++)
			dup |= (*out)[k] == dw->ranges[i].cu;
		if (!dup) {
			ALLOC_GROW(*out, n + 1, alloc);
			(*out)[n++] = dw->ranges[i].cu;
		}
	}
	return n;
}

/* ---- line tables ------------------------------------------------------------ */

struct row_sort {
	struct src_line row;
	size_t seq;             /* original position: stable order */
};

static int row_cmp(const void *a, const void *b)
{
	const struct row_sort *x = a, *y = b;

	if (x->row.addr != y->row.addr)
		return x->row.addr < y->row.addr ? -1 : 1;
	if (x->row.end_seq != y->row.end_seq)
		return x->row.end_seq ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *line_file(struct dwarf_info *dw, Dwarf_Line line, const char **cache,
			     size_t ncache)
{
	Dwarf_Unsigned fileno = 0;
	Dwarf_Error err = NULL;
	char *src = NULL;
	const char *name = "?";

	if (dwarf_line_srcfileno(line, &fileno, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		fileno = MAX_FILENO;
	}
	if (fileno < ncache && cache[fileno])
		return cache[fileno];
	if (dwarf_linesrc(line, &src, &err) == DW_DLV_OK && src) {
		name = keep(dw, src);
		dwarf_dealloc(dw->dbg, src, DW_DLA_STRING);
	}
	drop_err(dw, &err);
	if (fileno < ncache)
		cache[fileno] = name;
	return name;
}

static void load_rows(struct dwarf_info *dw, struct cu *cu, Dwarf_Die die)
{
	Dwarf_Unsigned version = 0;
	Dwarf_Small tables = 0;
	Dwarf_Line_Context ctx = NULL;
	Dwarf_Line *lines = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error err = NULL;
	struct row_sort *tmp;
	const char **cache;

	if (dwarf_srclines_b(die, &version, &tables, &ctx, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return;
	}
	if (dwarf_srclines_from_linecontext(ctx, &lines, &n, &err) != DW_DLV_OK || n <= 0) {
		drop_err(dw, &err);
		dwarf_srclines_dealloc_b(ctx);
		return;
	}
	tmp = xcalloc((size_t)n, sizeof(*tmp));
	cache = xcalloc(MAX_FILENO, sizeof(*cache));
	for (Dwarf_Signed i = 0; i < n; i++) {
		struct src_line *r = &tmp[i].row;
		Dwarf_Addr addr = 0;
		Dwarf_Unsigned lineno = 0;
		Dwarf_Bool stmt = 0, end = 0;

		if (dwarf_lineaddr(lines[i], &addr, &err) != DW_DLV_OK ||
		    dwarf_lineno(lines[i], &lineno, &err) != DW_DLV_OK) {
			drop_err(dw, &err);
			cu->bad = true;
		}
		dwarf_linebeginstatement(lines[i], &stmt, &err);
		drop_err(dw, &err);
		dwarf_lineendsequence(lines[i], &end, &err);
		drop_err(dw, &err);
		r->addr = addr;
		r->line = lineno > UINT32_MAX ? 0 : (uint32_t)lineno;
		r->stmt = stmt;
		r->end_seq = end;
		r->file = line_file(dw, lines[i], cache, MAX_FILENO);
		tmp[i].seq = (size_t)i;
	}
	dwarf_srclines_dealloc_b(ctx);
	if (n > 1)
		qsort(tmp, (size_t)n, sizeof(*tmp), row_cmp);
	cu->rows = xcalloc((size_t)n, sizeof(*cu->rows));
	for (Dwarf_Signed i = 0; i < n; i++)
		cu->rows[i] = tmp[i].row;
	cu->n_rows = (size_t)n;
	free(tmp);
	free(cache);
}

static void load_cu(struct dwarf_info *dw, struct cu *cu)
{
	Dwarf_Die die = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Half offsize = 0;

	if (cu->loaded)
		return;
	cu->loaded = true;
	if (dwarf_offdie_b(dw->dbg, cu->off, 1, &die, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		cu->bad = true;
		return;
	}
	dwarf_get_version_of_die(die, &cu->version, &offsize);
	cu->comp_dir = die_string(dw, die, DW_AT_comp_dir);
	load_rows(dw, cu, die);
	dwarf_dealloc_die(die);
}

static int line_cmp(const void *a, const void *b)
{
	const struct src_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->end_seq == y->end_seq ? 0 : x->end_seq ? -1 : 1;
}

int dwarf_info_lines(struct dwarf_info *dw, uint64_t lo, uint64_t hi, struct src_line **v,
		     size_t *n)
{
	size_t *cus, ncu, alloc = 0;
	bool bad = false;

	*v = NULL;
	*n = 0;
	ncu = cus_overlapping(dw, lo, hi, &cus);
	for (size_t c = 0; c < ncu; c++) {
		struct cu *cu = &dw->cus[cus[c]];
		long before = -1;

		load_cu(dw, cu);
		bad |= cu->bad;
		for (size_t i = 0; i < cu->n_rows; i++) {
			const struct src_line *r = &cu->rows[i];

			if (r->addr <= lo)
				before = r->end_seq ? -1 : (long)i;
			if (r->addr < lo || r->addr >= hi)
				continue;
			if (before >= 0 && cu->rows[before].addr < lo) {
				ALLOC_GROW(*v, *n + 1, alloc);
				(*v)[(*n)++] = cu->rows[before];
			}
			before = -1;
			ALLOC_GROW(*v, *n + 1, alloc);
			(*v)[(*n)++] = *r;
		}
		if (before >= 0 && cu->rows[before].addr < lo) {
			ALLOC_GROW(*v, *n + 1, alloc);
			(*v)[(*n)++] = cu->rows[before];
		}
	}
	free(cus);
	if (*n > 1)
		qsort(*v, *n, sizeof(**v), line_cmp);
	return bad ? -1 : 0;
}

const char *dwarf_info_comp_dir(struct dwarf_info *dw, uint64_t addr)
{
	size_t *cus, ncu = cus_overlapping(dw, addr, addr + 1, &cus);
	const char *dir = NULL;

	if (ncu) {
		load_cu(dw, &dw->cus[cus[0]]);
		dir = dw->cus[cus[0]].comp_dir;
	}
	free(cus);
	return dir;
}

/* ---- inlined subroutines ---------------------------------------------------- */

static void load_srcfiles(struct dwarf_info *dw, struct cu *cu, Dwarf_Die cudie)
{
	char **files = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error err = NULL;

	if (cu->srcfiles_loaded)
		return;
	cu->srcfiles_loaded = true;
	if (dwarf_srcfiles(cudie, &files, &n, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return;
	}
	cu->srcfiles = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*cu->srcfiles));
	for (Dwarf_Signed i = 0; i < n; i++) {
		cu->srcfiles[i] = keep(dw, files[i] ? files[i] : "?");
		dwarf_dealloc(dw->dbg, files[i], DW_DLA_STRING);
	}
	dwarf_dealloc(dw->dbg, files, DW_DLA_LIST);
	cu->n_srcfiles = (size_t)n;
}

/* The name of an inlined/abstract DIE, following abstract_origin and specification. */
static const char *origin_name(struct dwarf_info *dw, Dwarf_Die die)
{
	Dwarf_Off off;
	Dwarf_Error err = NULL;
	Dwarf_Die cur = NULL;
	const char *name = NULL;

	for (int hop = 0; hop < 4; hop++) {
		Dwarf_Die use = cur ? cur : die, next = NULL;

		if ((name = die_string(dw, use, DW_AT_name)))
			break;
		if (!die_ref(dw, use, DW_AT_abstract_origin, &off) &&
		    !die_ref(dw, use, DW_AT_specification, &off))
			break;
		if (dwarf_offdie_b(dw->dbg, off, 1, &next, &err) != DW_DLV_OK) {
			drop_err(dw, &err);
			break;
		}
		if (cur)
			dwarf_dealloc_die(cur);
		cur = next;
	}
	if (cur)
		dwarf_dealloc_die(cur);
	return name ? name : "?";
}

struct inl_walk {
	struct dwarf_info *dw;
	struct cu *cu;
	uint64_t base, lo, hi;
	struct src_inline *v;
	size_t n, alloc;
	struct range_buf rb;
	bool found_sub;
};

static void add_inline(struct inl_walk *w, Dwarf_Die die, unsigned depth)
{
	Dwarf_Unsigned file = 0, line = 0;
	const char *name = NULL, *call_file = NULL;

	die_ranges(w->dw, die, w->base, &w->rb);
	for (size_t i = 0; i < w->rb.n; i++) {
		uint64_t lo = w->rb.v[i].lo > w->lo ? w->rb.v[i].lo : w->lo;
		uint64_t hi = w->rb.v[i].hi < w->hi ? w->rb.v[i].hi : w->hi;
		struct src_inline *s;

		if (lo >= hi)
			continue;
		if (!name) {
			name = origin_name(w->dw, die);
			if (die_udata(w->dw, die, DW_AT_call_file, &file)) {
				/* DWARF 5 numbers files from 0, earlier versions from 1 */
				bool v5 = w->cu->version >= 5;
				size_t idx = v5 ? (size_t)file : (size_t)file - 1;

				if ((v5 || file) && idx < w->cu->n_srcfiles)
					call_file = w->cu->srcfiles[idx];
			}
			if (!die_udata(w->dw, die, DW_AT_call_line, &line))
				line = 0;
		}
		ALLOC_GROW(w->v, w->n + 1, w->alloc);
		s = &w->v[w->n++];
		s->lo = lo;
		s->hi = hi;
		s->depth = depth;
		s->name = name;
		s->call_file = call_file;
		s->call_line = line > UINT32_MAX ? 0 : (uint32_t)line;
	}
}

static bool ranges_hold(const struct range_buf *rb, uint64_t addr)
{
	for (size_t i = 0; i < rb->n; i++)
		if (addr >= rb->v[i].lo && addr < rb->v[i].hi)
			return true;
	return false;
}

/*
 * Walks the children of die.  Before the subprogram is found (depth 0),
 * looks for the DW_TAG_subprogram holding w->lo; inside it, collects
 * inlined subroutines (depth = nesting level).
 */
static void walk_children(struct inl_walk *w, Dwarf_Die parent, unsigned depth, unsigned level)
{
	Dwarf_Die child = NULL, next = NULL;
	Dwarf_Error err = NULL;

	if (level > MAX_DIE_DEPTH || dwarf_child(parent, &child, &err) != DW_DLV_OK) {
		drop_err(w->dw, &err);
		return;
	}
	while (child && w->dw->walked++ < MAX_DIES_WALKED) {
		Dwarf_Half tag = 0;

		if (dwarf_tag(child, &tag, &err) != DW_DLV_OK)
			drop_err(w->dw, &err);
		if (!w->found_sub) {
			if (tag == DW_TAG_subprogram) {
				die_ranges(w->dw, child, w->base, &w->rb);
				if (ranges_hold(&w->rb, w->lo)) {
					w->found_sub = true;
					walk_children(w, child, 1, level + 1);
				}
			} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
				   tag == DW_TAG_structure_type || tag == DW_TAG_module) {
				walk_children(w, child, 0, level + 1);
			}
		} else if (depth > 0) {
			if (tag == DW_TAG_inlined_subroutine) {
				add_inline(w, child, depth);
				walk_children(w, child, depth + 1, level + 1);
			} else if (tag == DW_TAG_lexical_block) {
				walk_children(w, child, depth, level + 1);
			}
		}
		if (dwarf_siblingof_b(w->dw->dbg, child, 1, &next, &err) != DW_DLV_OK) {
			drop_err(w->dw, &err);
			next = NULL;
		}
		dwarf_dealloc_die(child);
		child = next;
		if (w->found_sub && depth == 0)
			break;
	}
	if (child)
		dwarf_dealloc_die(child);
}

static int inline_cmp(const void *a, const void *b)
{
	const struct src_inline *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int dwarf_info_inlines(struct dwarf_info *dw, uint64_t lo, uint64_t hi, struct src_inline **v,
		       size_t *n)
{
	size_t *cus, ncu = cus_overlapping(dw, lo, lo + 1, &cus);
	struct inl_walk w;
	Dwarf_Die cudie = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Addr base = 0;

	*v = NULL;
	*n = 0;
	memset(&w, 0, sizeof(w));
	if (!ncu) {
		free(cus);
		return 0;
	}
	w.dw = dw;
	w.cu = &dw->cus[cus[0]];
	free(cus);
	load_cu(dw, w.cu);
	if (dwarf_offdie_b(dw->dbg, w.cu->off, 1, &cudie, &err) != DW_DLV_OK) {
		drop_err(dw, &err);
		return -1;
	}
	if (dwarf_lowpc(cudie, &base, &err) != DW_DLV_OK)
		base = 0;
	drop_err(dw, &err);
	load_srcfiles(dw, w.cu, cudie);
	w.base = base;
	w.lo = lo;
	w.hi = hi;
	dw->walked = 0;
	walk_children(&w, cudie, 0, 0);
	dwarf_dealloc_die(cudie);
	free(w.rb.v);
	if (w.n > 1)
		qsort(w.v, w.n, sizeof(*w.v), inline_cmp);
	*v = w.v;
	*n = w.n;
	return 0;
}

/* ---- pre-flight checks (libdwarf 20210528 workarounds) ----------------------- */

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

bool dwarf_lists_sane(const uint8_t *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		uint64_t unit;
		size_t lsize = 4, hdr;

		if (len - off < 4)
			return false;
		unit = le(p + off, 4);
		if (unit == 0xffffffffu) {
			if (len - off < 12)
				return false;
			unit = le(p + off + 4, 8);
			lsize = 12;
		} else if (unit >= 0xfffffff0u) {
			return false;
		}
		hdr = off + lsize;
		/* version (2), address size (1), segment selector size (1), offset count (4) */
		if (unit > len || len - hdr < 8 || le(p + hdr, 2) != 5)
			return false;
		if (p[hdr + 2] != 2 && p[hdr + 2] != 4 && p[hdr + 2] != 8)
			return false;
		if (unit > len - hdr)
			return false;
		off = hdr + (size_t)unit;
	}
	return true;
}
