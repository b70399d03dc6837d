// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The top view's screen: ncurses from the distribution (see top.h). */
#define _GNU_SOURCE /* memmem */
#include <curses.h>
#include <string.h>
#include "sink/top.h"

int les_top_screen_open(void)
{
	if (!initscr())
		return -1;
	cbreak();
	noecho();
	curs_set(0);
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	return 0;
}

void les_top_screen_close(void)
{
	if (!isendwin())
		endwin();
}

void les_top_screen_size(int *width, int *height)
{
	getmaxyx(stdscr, *height, *width);
}

void les_top_screen_draw(const char *frame)
{
	int row = 0, width, height;

	les_top_screen_size(&width, &height);
	erase();
	for (const char *p = frame; *p && row < height; row++) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		mvaddnstr(row, 0, p, n < width ? n : width);
		/* The column header in reverse, as top draws it. */
		if (n > 8 && memmem(p, (size_t)n, " META/s ", 8))
			mvchgat(row, 0, width, A_REVERSE, 0, NULL);
		if (!nl)
			break;
		p = nl + 1;
	}
	refresh();
}

int les_top_screen_key(void)
{
	int key = getch();

	return key == ERR ? -1 : key;
}

static void prompt(const char *question, char *buf, size_t len)
{
	int width, height;

	les_top_screen_size(&width, &height);
	nodelay(stdscr, FALSE);
	echo();
	curs_set(1);
	mvaddstr(height - 1, 0, question);
	clrtoeol();
	refresh();
	if (getnstr(buf, (int)len - 1) == ERR)
		buf[0] = '\0';
	noecho();
	curs_set(0);
	nodelay(stdscr, TRUE);
}

void les_top_screen_ask_filter(struct les_top_view *v, struct les_top *t)
{
	char filter[LES_TOP_NAME_LEN];

	if (!v->ask_filter)
		return;
	prompt("filter (job, user or op; empty: all): ", filter, sizeof(filter));
	les_top_set_filter(t, filter);
	v->ask_filter = false;
}
