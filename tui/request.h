/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/request.h - everything a user can ask dcpi-tui to do, in one table.
 *
 * REQ_INFO is an X-macro (tig's include/tig/request.h): each entry names a
 * request once, and the same table generates the request enum, the default
 * key bindings, the `:` command names, the argument each command takes (and
 * so what the prompt completes), and the help view.  Adding a request here is
 * all it takes to make it bindable, typeable, completable and documented.
 *
 *   GROUP(title)                              a section of the help view
 *   REQ(ID, name, keys, arg, help)
 *     ID    REQ_ID in enum request
 *     name  the command name at the prompt (":name ARG")
 *     keys  default bindings, separated by spaces, in the key syntax of
 *           key_parse() ("j <Down>", "<C-f>"); "" for prompt-only commands
 *     arg   the argument kind (enum arg_kind without ARG_): what the
 *           command needs and what the prompt completes
 *     help  one line for the help view
 *   VIEW(name, opener, command, keys, help)
 *           the request that opens a view, from its line in VIEW_INFO
 *           (tui/views.h): REQ_VIEW_name, taking no argument; the session
 *           opens the view as opener says
 *
 * A request that needs an argument and is invoked by a key opens the prompt
 * with ":name " filled in.  Views see requests, never keys.
 */
#ifndef DCPI_TUI_REQUEST_H
#define DCPI_TUI_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/views.h"

struct strbuf;

/* What a command takes after its name, and what the prompt completes. */
enum arg_kind {
	ARG_NONE,       /* nothing */
	ARG_TEXT,       /* free text, required */
	ARG_OPT_TEXT,   /* free text, may be empty */
	ARG_EPOCH,      /* an epoch name: number, label, latest, latest~N */
	ARG_EPOCH_PAIR, /* two epoch names, or none (the marked pair) */
	ARG_EVENT,      /* an event name */
	ARG_COLUMN,     /* a column of the current view */
	ARG_GOTO,       /* a name or an address the current view can find */
	ARG_FILE,       /* a file name */
	ARG_SIZE,       /* COLUMNS LINES */
	ARG_NORM,       /* total or period, or none (the other one) */
};

/* The views' requests (VIEW_INFO lines but those with opener NONE), as VIEW entries. */
#define REQ_VIEW_(V, name, opener, command, keys, help) \
	REQ_VIEW_##opener(V, name, opener, command, keys, help)
#define REQ_VIEW_NONE(V, name, opener, command, keys, help)
#define REQ_VIEW_SHOW(V, name, opener, command, keys, help) V(name, opener, command, keys, help)
#define REQ_VIEW_OPEN REQ_VIEW_SHOW
#define REQ_VIEW_TOGGLE REQ_VIEW_SHOW

#define REQ_INFO(GROUP, REQ, VIEW)                                                        \
	GROUP("Moving around")                                                            \
	REQ(MOVE_UP, "move-up", "k <Up>", NONE, "Move the cursor up one line")            \
	REQ(MOVE_DOWN, "move-down", "j <Down>", NONE, "Move the cursor down one line")    \
	REQ(MOVE_PAGE_UP, "move-page-up", "<PgUp> <C-b> -", NONE, "Move up one page")     \
	REQ(MOVE_PAGE_DOWN, "move-page-down", "<PgDown> <C-f> <Space>", NONE,            \
	    "Move down one page")                                                         \
	REQ(MOVE_HALF_UP, "move-half-page-up", "<C-u>", NONE, "Move up half a page")      \
	REQ(MOVE_HALF_DOWN, "move-half-page-down", "<C-d>", NONE, "Move down half a page") \
	REQ(MOVE_FIRST, "move-first-line", "g <Home>", NONE, "Move to the first line")    \
	REQ(MOVE_LAST, "move-last-line", "G <End>", NONE, "Move to the last line")        \
	REQ(SCROLL_LEFT, "scroll-left", "h <Left>", NONE, "Scroll the view left")         \
	REQ(SCROLL_RIGHT, "scroll-right", "l <Right>", NONE, "Scroll the view right")     \
	REQ(GOTO, "goto", "", GOTO, "Go to a name or address in the view")                \
	GROUP("Views")                                                                    \
	REQ(ENTER, "enter", "<Enter>", NONE, "Open the selected line (drill down)")       \
	REQ(BACK, "back", "q <Backspace> <Esc>", NONE,                                    \
	    "Go back (from the first view: quit)")                       \
	REQ(QUIT, "quit", "Q", NONE, "Quit dcpi-tui")                                     \
	VIEW_INFO(REQ_VIEW_, VIEW)                                                        \
	REQ(TOGGLE_PANE, "toggle-pane", "p", NONE, "Show or hide the details pane")       \
	REQ(REFRESH, "refresh", "<C-l>", NONE, "Redraw the screen")                       \
	REQ(RELOAD, "reload", "R", NONE, "Reread the database")  \
	GROUP("Searching, sorting, filtering")                                            \
	REQ(SEARCH, "search", "/", TEXT, "Search for a regular expression")       \
	REQ(FIND_NEXT, "find-next", "n", NONE, "Go to the next match")                    \
	REQ(FIND_PREV, "find-prev", "N", NONE, "Go to the previous match")                \
	REQ(SORT, "sort", "", COLUMN, "Sort by COLUMN (again: reverse)")        \
	REQ(SORT_NEXT, "sort-next", "<gt>", NONE, "Sort by the next column")              \
	REQ(SORT_PREV, "sort-prev", "<lt>", NONE, "Sort by the previous column")          \
	REQ(SORT_REVERSE, "sort-reverse", "S", NONE, "Reverse the sort order")            \
	REQ(FILTER, "filter", "f", OPT_TEXT, "Show only lines with TEXT (or all)") \
	GROUP("Profile")                                                                  \
	REQ(EPOCH, "epoch", "e", EPOCH, "Switch to epoch E (number, label)")     \
	REQ(EVENT, "event", "v", EVENT, "Show samples of event NAME")                     \
	REQ(MARK, "mark", "m", NONE, "Mark an epoch (A, B), then the next")               \
	REQ(DIFF, "diff", "d", EPOCH_PAIR, "Diff epochs A, B (or the marked)") \
	REQ(FORCE, "force", "", NONE, "Use changed binaries (again: stop)") \
	REQ(CALLERS, "callers", "C", NONE, "Callers and callees of a procedure")         \
	REQ(GROUP_BY, "group", "b", TEXT, "Group by comm, pid, tgid (or image)")          \
	GROUP("Procedure view")                                                           \
	REQ(HOTTEST, "hottest", "H", NONE, "Visit the blocks, hottest first")   \
	REQ(TOGGLE_SOURCE, "toggle-source", "s", NONE, "Show or hide source lines")       \
	REQ(TOGGLE_VALUES, "toggle-values", "V", NONE, "Show or hide the common values") \
	REQ(NEXT_STALL, "next-stall", "]", NONE, "Go to the next stall")\
	REQ(PREV_STALL, "prev-stall", "[", NONE, "Go to the previous stall") \
	REQ(CULPRIT, "culprit", "c", NONE, "Go to the culprit (again: the next)") \
	GROUP("Diff views")                                                               \
	REQ(SWAP, "swap", "x", NONE, "Exchange sides A and B")                            \
	REQ(TOGGLE_ALL, "toggle-all", "a", NONE, "Show every row, or the notable ones")  \
	REQ(NORMALIZE, "normalize", "%", NORM,                                           \
	    "Diff shares (total) or time (period)")                                   \
	GROUP("Prompt and dumps")                                                         \
	REQ(PROMPT, "prompt", ":", NONE, "Open the command prompt")                       \
	REQ(SAVE_DISPLAY, "save-display", "", FILE,                                       \
	    "Write the screen (-a: attributes)")                             \
	REQ(SAVE_VIEW, "save-view", "", FILE, "Write the view's lines to FILE")    \
	REQ(RESIZE, "resize", "", SIZE, "Resize a headless screen")

enum request {
	REQ_NONE = 0,
#define REQ_ENUM_(id, name, keys, arg, help) REQ_##id,
#define REQ_ENUM_VIEW_(name, opener, command, keys, help) REQ_VIEW_##name,
#define REQ_GROUP_IGNORE_(title)
	REQ_INFO(REQ_GROUP_IGNORE_, REQ_ENUM_, REQ_ENUM_VIEW_)
#undef REQ_ENUM_
#undef REQ_ENUM_VIEW_
	REQ__COUNT
};

struct request_info {
	enum request req;
	const char *name;
	const char *keys;
	enum arg_kind arg;
	const char *help;
	const char *group;
	const char *view;          /* a view's request: the view (VIEW_INFO's name), else NULL */
	enum view_opener opener;   /* ... and how it opens it */
};

/* The table entry of req (BUG() on REQ_NONE or out of range). */
const struct request_info *request_info(enum request req);

/*
 * The request with this command name, or alias: "q", and the name of a view
 * for its request (":help", ":epochs"); REQ_NONE if none.
 */
enum request request_lookup(const char *name);

/* Calls fn for every request in table order (for help and completion). */
void request_foreach(void (*fn)(const struct request_info *info, void *data), void *data);

/* ---- keys ------------------------------------------------------------- */

/*
 * Keys are ints as wgetch() returns them: bytes 0-255 and ncurses KEY_*
 * codes.  key_normalize() folds the variants terminals send for the same key
 * (\n and KEY_ENTER into \r; DEL and ^H into KEY_BACKSPACE).
 */
int key_normalize(int key);

/*
 * Parses one key at *s and advances *s past it.  The syntax (bindings,
 * scripts): a plain byte stands for itself; <Name> names a special key:
 * Enter, Tab, Esc, Space, Backspace, Up, Down, Left, Right, PgUp, PgDown,
 * Home, End, Delete, Insert, F1-F12, lt ("<"), gt (">"), C-x (control), or a
 * single character (<:>).  A '<' that starts no valid name is a plain '<'.
 * Returns the key, or -1 with *why set on a malformed <...> sequence.
 */
int key_parse(const char **s, const char **why);

/* Appends a readable name of key ("j", "Up", "C-l", "Space"). */
void key_describe(int key, struct strbuf *sb);

/*
 * The bytes a terminal sends for key when the keypad is off (what readline
 * reads): "\033[A" for Up, "\r" for Enter, "\177" for Backspace.  Returns
 * the length written into buf (at most 8), 0 if the key has no sequence.
 */
size_t key_to_bytes(int key, char buf[8]);

/* The request bound to key by default, or REQ_NONE. */
enum request key_request(int key);

/* Appends the names of the keys bound to req, separated by ", ". */
void request_key_names(enum request req, struct strbuf *sb);

#endif
