/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/prompt.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/display.h"
#include "tui/request.h"
#include "tui/script.h"
#include "tui/tui-int.h"
#include "tui/view.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#define HISTORY_MAX 500
#define CTRL_(c) ((c) & 0x1f)
#define NO_BYTE (-2)

/* Readline's callbacks take no context: the state of the one open prompt. */
static struct {
	struct tui *t;
	struct prompt_hooks hooks;
	bool done, cancelled;
	char *line;
	char pend[8];          /* the rest of a key's byte sequence */
	size_t pend_len, pend_pos;
	/* Two histories, commands and searches, swapped in and out of readline. */
	struct {
		char *file;
		HISTORY_STATE *state;
	} hist[2];
	int cur;               /* the history readline has now */
	bool ready;
	FILE *devnull_out, *devnull_in;
} P;

/* ---- history ---------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
	char *p = xstrdup(dir);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	return mkdir(dir, 0700) && errno != EEXIST ? -1 : 0;
}

/* The history file called name, its directory created; NULL if no HOME. */
static char *history_path(const char *name)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char *base, *dir, *path;

	if (state && *state == '/')
		base = xstrdup(state);
	else if (home && *home == '/')
		base = xasprintf("%s/.local/state", home);
	else
		return NULL;
	dir = xasprintf("%s/dcpi", base);
	path = xasprintf("%s/%s", dir, name);
	if (mkdir_p(dir)) {
		free(path);
		path = NULL;
	}
	free(base);
	free(dir);
	return path;
}

/* Makes history h (0: commands, 1: searches) readline's. */
static void use_history(int h)
{
	if (P.cur == h)
		return;
	free(P.hist[P.cur].state);
	P.hist[P.cur].state = history_get_history_state();
	history_set_history_state(P.hist[h].state);
	P.cur = h;
}

static void load_histories(void)
{
	static const char *const names[] = { "tui_history", "tui_search_history" };

	for (int h = 0; h < 2; h++) {
		history_set_history_state(&(HISTORY_STATE){ 0 });
		stifle_history(HISTORY_MAX);
		P.hist[h].file = history_path(names[h]);
		if (P.hist[h].file)
			read_history(P.hist[h].file);
		P.hist[h].state = history_get_history_state();
	}
	history_set_history_state(P.hist[0].state);
	P.cur = 0;
}

static void save_histories(void)
{
	for (int h = 0; h < 2; h++) {
		use_history(h);
		if (P.hist[h].file)
			history_truncate_file(P.hist[h].file, HISTORY_MAX);
		clear_history();
		free(history_list()); /* clear_history() keeps the array */
		history_set_history_state(&(HISTORY_STATE){ 0 });
		free(P.hist[h].file);
	}
	free(P.hist[0].state);
	free(P.hist[1].state);
}

static void remember(const char *line)
{
	HIST_ENTRY *last = history_get(history_base + history_length - 1);
	const char *file = P.hist[P.cur].file;
	int fd;

	if (!*line || (last && !strcmp(last->line, line)))
		return;
	add_history(line);
	if (!file)
		return;
	fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	append_history(1, file);
}

/* ---- input ------------------------------------------------------------ */

static void redisplay(void)
{
	struct tui *t = P.t;

	t->prompt.prompt = rl_display_prompt;
	t->prompt.line = rl_line_buffer;
	t->prompt.point = rl_point;
	display_redraw(t);
}

static void clear_matches(void)
{
	struct tui *t = P.t;

	for (size_t i = 0; i < t->prompt.n_matches; i++)
		free(t->prompt.matches[i]);
	free(t->prompt.matches);
	t->prompt.matches = NULL;
	t->prompt.n_matches = 0;
}

/* The next byte of a script: keys as a terminal sends them. */
static int script_byte(void)
{
	struct tui *t = P.t;
	const struct script_item *it;

	jobs_wait_idle(&t->src.jobs);
	tui_collect(t);
	it = script_next(t->script);
	if (!it)
		return CTRL_('g');
	if (it->kind == SCRIPT_COMMAND) {
		P.hooks.command(t, it->command);
		if (t->quit)
			return CTRL_('g');
		redisplay();
		return NO_BYTE;
	}
	if (it->key == 27 && it->line_end)
		return CTRL_('g');
	P.pend_len = key_to_bytes(it->key, P.pend);
	P.pend_pos = 1;
	return P.pend_len ? (unsigned char)P.pend[0] : NO_BYTE;
}

/* The next byte from the keyboard; a lone Escape becomes C-g (cancel). */
static int terminal_byte(void)
{
	struct tui *t = P.t;
	int c;

	tui_collect(t);
	if (t->dirty_views)
		redisplay();
	c = display_getbyte(t, 0);
	if (c == ERR) {
		display_wait(t, jobs_wake_fd(&t->src.jobs), jobs_busy(&t->src.jobs) ? 100 : -1);
		c = display_getbyte(t, 0);
	}
	if (c == ERR) {
		redisplay(); /* a finished job, or progress of background work */
		return NO_BYTE;
	}
	if (c == KEY_RESIZE) {
		display_layout(t);
		redisplay();
		return NO_BYTE;
	}
	if (c == 27) {
		int c2 = display_getbyte(t, 30);

		if (c2 == ERR)
			return CTRL_('g');
		P.pend[0] = (char)c2;
		P.pend_len = 1;
		P.pend_pos = 0;
	}
	return c >= 0 && c < 256 ? c : NO_BYTE;
}

static int getc_fn(FILE *f)
{
	(void)f;
	if (P.pend_pos < P.pend_len)
		return (unsigned char)P.pend[P.pend_pos++];
	P.pend_len = P.pend_pos = 0;
	for (;;) {
		int c = P.t->script ? script_byte() : terminal_byte();

		if (c == NO_BYTE)
			continue;
		/* The completion list stays up until the next key. */
		if (P.t->prompt.n_matches) {
			clear_matches();
			redisplay();
		}
		return c;
	}
}

static int input_available(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

	if (P.pend_pos < P.pend_len)
		return 1;
	return !P.t->script && poll(&pfd, 1, 0) > 0;
}

/* ---- bindings ----------------------------------------------------------- */

static int cancel_fn(int count, int key)
{
	P.cancelled = true;
	rl_done = 1;
	return 0;
}

static int rubout_fn(int count, int key)
{
	if (rl_end == 0)
		return cancel_fn(count, key);
	return rl_rubout(count, key);
}

static int refresh_fn(int count, int key)
{
	display_clear(P.t);
	rl_forced_update_display();
	return 0;
}

/* ---- completion --------------------------------------------------------- */

static struct candidates cands;
static size_t cand_next;

static char *cand_generator(const char *text, int state)
{
	if (!state)
		cand_next = 0;
	while (cand_next < cands.n) {
		const char *w = cands.v[cand_next++];

		if (!strncmp(w, text, strlen(text)))
			return xstrdup(w);
	}
	return NULL;
}

static void add_command_name(const struct request_info *info, void *data)
{
	candidates_add(data, info->name);
}

/* How many words of the line end before offset start. */
static int words_before(int start)
{
	bool in_word = false;
	int n = 0;

	for (int i = 0; i < start && rl_line_buffer[i]; i++) {
		if (rl_line_buffer[i] == ' ') {
			in_word = false;
		} else if (!in_word) {
			in_word = true;
			n++;
		}
	}
	return n;
}

/* The argument kind of the word starting at start (after the command). */
static enum arg_kind arg_kind_at(int start)
{
	char cmd[64];
	size_t n = strcspn(rl_line_buffer, " ");
	int words = words_before(start);
	enum request req;

	if (n >= sizeof(cmd))
		return ARG_NONE;
	memcpy(cmd, rl_line_buffer, n);
	cmd[n] = '\0';
	if ((req = request_lookup(cmd)) == REQ_NONE)
		return ARG_NONE;
	if (words == 1 || (words == 2 && request_info(req)->arg == ARG_EPOCH_PAIR))
		return request_info(req)->arg;
	return ARG_NONE;
}

static char **complete_fn(const char *text, int start, int end)
{
	enum arg_kind kind = ARG_NONE;
	char **matches;

	rl_attempted_completion_over = 1;
	if (strcmp(P.t->prompt.prompt ? P.t->prompt.prompt : "", ":"))
		return NULL;
	candidates_release(&cands);
	cands.prefix = text;
	if (!words_before(start)) {
		request_foreach(add_command_name, &cands);
	} else {
		kind = arg_kind_at(start);
		if (kind == ARG_FILE) {
			rl_attempted_completion_over = 0;
			return NULL;
		}
		P.hooks.complete(P.t, kind, &cands);
	}
	matches = cands.n ? rl_completion_matches(text, cand_generator) : NULL;
	candidates_release(&cands);
	return matches;
}

static void display_matches(char **matches, int n, int max)
{
	struct tui *t = P.t;

	clear_matches();
	t->prompt.matches = xcalloc((size_t)n, sizeof(char *));
	for (int i = 0; i < n; i++)
		t->prompt.matches[i] = xstrdup(matches[i + 1]);
	t->prompt.n_matches = (size_t)n;
	redisplay();
}

/* ---- the prompt ----------------------------------------------------------- */

void prompt_init(struct tui *t, const struct prompt_hooks *hooks)
{
	P.t = t;
	P.hooks = *hooks;
	P.devnull_out = fopen("/dev/null", "w");
	P.devnull_in = fopen("/dev/null", "r");
	rl_readline_name = "dcpi-tui";
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	rl_prep_term_function = NULL;
	rl_deprep_term_function = NULL;
	rl_getc_function = getc_fn;
	rl_input_available_hook = input_available;
	rl_redisplay_function = redisplay;
	rl_attempted_completion_function = complete_fn;
	rl_completion_display_matches_hook = display_matches;
	rl_outstream = P.devnull_out;
	rl_instream = P.devnull_in;
	/* List the choices at the first Tab (an inputrc may say otherwise). */
	rl_variable_bind("show-all-if-ambiguous", "on");
	rl_initialize();
	rl_bind_key(CTRL_('g'), cancel_fn);
	rl_bind_key(CTRL_('c'), cancel_fn);
	rl_bind_key(127, rubout_fn);
	rl_bind_key(CTRL_('h'), rubout_fn);
	rl_bind_key(CTRL_('l'), refresh_fn);
	load_histories();
	P.ready = true;
}

void prompt_release(struct tui *t)
{
	if (!P.ready)
		return;
	save_histories();
	if (P.devnull_out)
		fclose(P.devnull_out);
	if (P.devnull_in)
		fclose(P.devnull_in);
	memset(&P, 0, sizeof(P));
}

static void line_handler(char *line)
{
	P.done = true;
	if (!line || P.cancelled) {
		P.cancelled = true;
		free(line);
		return;
	}
	P.line = line;
}

char *prompt_read(struct tui *t, const char *prompt, const char *initial)
{
	char *line;

	P.t = t;
	P.done = P.cancelled = false;
	P.line = NULL;
	P.pend_len = P.pend_pos = 0;
	t->prompt.active = true;
	t->prompt.prompt = prompt;
	use_history(strcmp(prompt, "/") ? 0 : 1);
	using_history();
	rl_callback_handler_install(prompt, line_handler);
	if (initial) {
		rl_replace_line(initial, 0);
		rl_point = rl_end;
	}
	redisplay();
	while (!P.done)
		rl_callback_read_char();
	rl_callback_handler_remove();
	clear_matches();
	t->prompt.active = false;
	t->prompt.line = NULL;
	line = P.line;
	P.line = NULL;
	if (line)
		remember(line);
	return line;
}
