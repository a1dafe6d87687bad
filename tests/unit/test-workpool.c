/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the engine (core/workpool.h) and of messages kept and said
 * again (core/die.h): batches done in order, or taken as asked, with each
 * item's messages said in item order; tasks queued by urgency, one at a
 * time, the urgent ones run at the yield points of the others; cancelling.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/die.h"
#include "core/workpool.h"
#include "core/xalloc.h"

/* ---- messages ------------------------------------------------------------------ */

static void captured_and_said_again(void **state)
{
	struct report_log outer = REPORT_LOG_INIT, inner = REPORT_LOG_INIT, *prev;
	unsigned errors = error_count();

	(void)state;
	prev = report_capture(&outer);
	warning("one");
	report_capture(&inner);
	errorf("two");
	warning("three");
	report_capture(&outer);
	assert_int_equal(error_count(), errors + 1);
	assert_string_equal(report_log_last(&inner, "-"), "three");
	report_log_replay(&inner);  /* into outer, not counted again */
	report_capture(prev);
	assert_int_equal(inner.n, 0);
	assert_int_equal(outer.n, 3);
	assert_int_equal(error_count(), errors + 1);
	assert_string_equal(outer.v[0].text, "one");
	assert_string_equal(outer.v[1].text, "two");
	assert_int_equal(outer.v[1].level, REPORT_ERROR);
	assert_string_equal(outer.v[2].text, "three");
	assert_string_equal(report_log_last(&inner, "-"), "-");
	report_log_clear(&outer);
}

/* ---- batches ------------------------------------------------------------------- */

struct batch_state {
	size_t n;
	size_t *worked;
	_Atomic size_t times;           /* works, all items */
	size_t next_done;
	int bad;
};

static void batch_work(void *ctx, size_t i)
{
	struct batch_state *s = ctx;

	s->worked[i] = i * 3 + 1;
	atomic_fetch_add(&s->times, 1);
	if (i % 3 == 1)
		warning("item %zu", i);
}

static void batch_done(void *ctx, size_t i)
{
	struct batch_state *s = ctx;

	if (i != s->next_done++ || s->worked[i] != i * 3 + 1)
		s->bad++;
	warning("done %zu", i);
}

/* The messages of a run: "item I" then "done I" (in order), for every I. */
static void check_said(const struct report_log *log, size_t n, bool with_done)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		char want[32];

		if (i % 3 == 1) {
			snprintf(want, sizeof(want), "item %zu", i);
			assert_true(k < log->n);
			assert_string_equal(log->v[k++].text, want);
		}
		if (with_done) {
			snprintf(want, sizeof(want), "done %zu", i);
			assert_true(k < log->n);
			assert_string_equal(log->v[k++].text, want);
		}
	}
	assert_int_equal(k, log->n);
}

static void batch_in_order(void **state)
{
	(void)state;
	for (unsigned threads = 1; threads <= 4; threads++)
		for (size_t n = 0; n < 200; n += 1 + n / 3) {
			struct batch_state s = { .n = n, .worked = xcalloc(n + 1, sizeof(size_t)) };
			struct workpool_batch b = { .n = n, .threads = threads, .window = threads == 3,
						    .work = batch_work, .done = batch_done, .ctx = &s };
			struct report_log log = REPORT_LOG_INIT, *prev = report_capture(&log);

			assert_int_equal(workpool_run(&b), 0);
			report_capture(prev);
			assert_int_equal(s.bad, 0);
			assert_int_equal(s.next_done, n);
			assert_int_equal(atomic_load(&s.times), n);
			check_said(&log, n, true);
			report_log_clear(&log);
			free(s.worked);
		}
}

/* Items asked for go first; every item is worked once; messages in item order still. */
struct prefer_state {
	struct workpool_batch b;
	struct batch_state s;
	size_t *order;
	_Atomic size_t n_order;
};

static void prefer_work(void *ctx, size_t i)
{
	struct prefer_state *p = ctx;

	/* the first item asks for the last ones: they come before the middle */
	if (i == 0)
		for (size_t k = 0; k < 5; k++)
			workpool_prefer(&p->b, p->s.n - 1 - k);
	p->order[atomic_fetch_add(&p->n_order, 1)] = i;
	batch_work(&p->s, i);
	usleep(100);
}

static void batch_any_order(void **state)
{
	const size_t n = 400;
	struct prefer_state p = { .s = { .n = n, .worked = xcalloc(n, sizeof(size_t)) },
				  .order = xcalloc(n, sizeof(size_t)) };
	struct report_log log = REPORT_LOG_INIT, *prev = report_capture(&log);
	size_t last_seen = 0;

	(void)state;
	p.b = (struct workpool_batch){ .n = n, .threads = 2, .work = prefer_work, .ctx = &p,
				       .any_order = true };
	assert_int_equal(workpool_run(&p.b), 0);
	report_capture(prev);
	assert_int_equal(atomic_load(&p.s.times), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p.s.worked[i], i * 3 + 1);
	for (size_t k = 0; k < n; k++)
		if (p.order[k] == n - 1)
			last_seen = k;
	assert_true(last_seen < n / 2);  /* asked for: not left to the end */
	check_said(&log, n, false);
	report_log_clear(&log);
	free(p.s.worked);
	free(p.order);
}

/* ---- tasks --------------------------------------------------------------------- */

struct trace {
	_Atomic int step;
	int fg_at, bg_end, bg_resumed;
	atomic_bool release;
	_Atomic int fg_runs;
};

/* A background task that waits at yield points until released. */
static void bg_run(struct workpool_task *t)
{
	struct trace *tr = t->ctx;

	warning("bg starts");
	workpool_progress(1, 4);
	while (!atomic_load(&tr->release) && !workpool_cancelled()) {
		workpool_yield();
		usleep(200);
	}
	tr->bg_resumed = atomic_fetch_add(&tr->step, 1);
	warning("bg ends");
	tr->bg_end = atomic_fetch_add(&tr->step, 1);
}

static void fg_run(struct workpool_task *t)
{
	struct trace *tr = t->ctx;

	tr->fg_at = atomic_fetch_add(&tr->step, 1);
	atomic_fetch_add(&tr->fg_runs, 1);
	errorf("fg");
	atomic_store(&tr->release, true);
}

static void tasks_by_urgency(void **state)
{
	struct trace tr = { 0 };
	struct workpool_task bg = { .run = bg_run, .ctx = &tr, .prio = WORKPOOL_BACKGROUND };
	struct workpool_task fg = { .run = fg_run, .ctx = &tr, .prio = WORKPOOL_NORMAL };
	struct workpool_task gone = { .run = fg_run, .ctx = &tr, .prio = WORKPOOL_BACKGROUND };

	(void)state;
	workpool_submit(&bg);
	while (atomic_load(&bg.done) != 1)
		usleep(100);
	assert_int_equal(atomic_load(&bg.total), 4);
	/* cancelled before it starts: never run */
	workpool_cancel(&gone);
	workpool_submit(&gone);
	/* the foreground task runs at the background one's yield point, which then goes on */
	workpool_submit(&fg);
	workpool_wait(&fg);
	workpool_wait(&bg);
	workpool_wait(&gone);
	assert_int_equal(workpool_state(&bg), WORKPOOL_DONE);
	assert_int_equal(tr.fg_at, 0);
	assert_int_equal(tr.bg_resumed, 1);
	assert_int_equal(tr.bg_end, 2);
	assert_int_equal(atomic_load(&tr.fg_runs), 1);
	assert_int_equal(bg.log.n, 2);
	assert_string_equal(bg.log.v[0].text, "bg starts");
	assert_string_equal(bg.log.v[1].text, "bg ends");
	assert_int_equal(fg.log.n, 1);
	assert_string_equal(report_log_last(&fg.log, "-"), "fg");
	assert_int_equal(gone.log.n, 0);
	report_log_clear(&bg.log);
	report_log_clear(&fg.log);
}

/* A background task's batch gives way to an urgent task between items. */
struct bgbatch {
	struct workpool_task fg;
	_Atomic size_t worked, at_fg;
	bool submitted;
};

static void slow_item(void *ctx, size_t i)
{
	struct bgbatch *w = ctx;

	(void)i;
	usleep(300);
	atomic_fetch_add(&w->worked, 1);
}

static void mark_fg(struct workpool_task *t)
{
	struct bgbatch *w = t->ctx;

	atomic_store(&w->at_fg, atomic_load(&w->worked));
}

static void bg_batch_item(void *ctx, size_t i)
{
	struct bgbatch *w = ctx;

	slow_item(ctx, i);
	if (i == 20 && !w->submitted) {
		w->submitted = true;
		workpool_submit(&w->fg);
	}
}

static void bg_batch_run2(struct workpool_task *t)
{
	struct bgbatch *w = t->ctx;
	struct workpool_batch b = { .n = 200, .threads = 2, .work = bg_batch_item, .ctx = w };

	assert_int_equal(workpool_run(&b), 0);
}

static void batch_gives_way(void **state)
{
	struct bgbatch w = { .fg = { .run = mark_fg, .prio = WORKPOOL_SCREEN } };
	struct workpool_task bg = { .run = bg_batch_run2, .ctx = &w, .prio = WORKPOOL_BACKGROUND };

	(void)state;
	w.fg.ctx = &w;
	workpool_submit(&bg);
	workpool_wait(&bg);
	workpool_wait(&w.fg);
	assert_int_equal(atomic_load(&w.worked), 200);
	/* it ran while the batch was under way, not after it */
	assert_true(atomic_load(&w.at_fg) < 200);
	assert_true(atomic_load(&w.at_fg) > 20);
}

/* Cancelled in the middle: the batch stops taking items; done() for those in order. */
struct cancel_state {
	struct workpool_task *t;
	size_t next_done;
};

static void cancel_work(void *ctx, size_t i)
{
	struct cancel_state *c = ctx;

	if (i == 30)
		workpool_cancel(c->t);
	usleep(50);
}

static void cancel_done(void *ctx, size_t i)
{
	struct cancel_state *c = ctx;

	assert_int_equal(i, c->next_done);
	c->next_done++;
}

static void cancel_run(struct workpool_task *t)
{
	struct cancel_state *c = t->ctx;
	struct workpool_batch b = { .n = 1000, .threads = 2, .work = cancel_work,
				    .done = cancel_done, .ctx = c };

	c->t = t;
	assert_int_equal(workpool_run(&b), -1);
	assert_true(workpool_cancelled());
}

static void batch_cancelled(void **state)
{
	struct cancel_state c = { 0 };
	struct workpool_task t = { .run = cancel_run, .ctx = &c, .prio = WORKPOOL_NORMAL };

	(void)state;
	workpool_submit(&t);
	workpool_wait(&t);
	assert_true(c.next_done > 30);
	assert_true(c.next_done < 1000);
	/* the same without threads: run here */
	memset(&c, 0, sizeof(c));
	t = (struct workpool_task){ .run = cancel_run, .ctx = &c, .prio = WORKPOOL_NORMAL };
	workpool_run_here(&t);
	assert_int_equal(workpool_state(&t), WORKPOOL_DONE);
	assert_true(c.next_done > 30);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(captured_and_said_again),
		cmocka_unit_test(batch_in_order),
		cmocka_unit_test(batch_any_order),
		cmocka_unit_test(tasks_by_urgency),
		cmocka_unit_test(batch_gives_way),
		cmocka_unit_test(batch_cancelled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
