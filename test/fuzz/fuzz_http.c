// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The /metrics endpoint. The HTTP parsing is libmicrohttpd's; what is ours
 * is the handler (method and URL: the only parts of a request it reads)
 * and what it serves. The input, up to its first NUL, is sent as raw bytes
 * to the endpoint, started once on 127.0.0.1 with a free port, whose store
 * holds records with label values that need escaping. Every whole 200
 * answer must be exposition text (fuzz_prom_render fuzzes the label
 * values). An answer is waited for 20 ms: libmicrohttpd answers some
 * broken requests (blank lines alone) only at its connection timeout, and
 * a well-formed one comes in well under 1 ms here.
 *
 * Each input is a round trip through the server's thread, so this target
 * runs at about a thousand inputs a second, not a hundred thousand.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "exposition.h"

static struct les_prom *prom;
static uint16_t port;
static const struct les_prom_config cfg = {
	.listen = "127.0.0.1:0",
	.path = "/metrics",
	.uid_labels = true,
	.histogram_process = true,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Label values that need escaping: quotes and a backslash. */
	char labels[] = "job \"q\" \\ x\ndd\n/mnt/a\nb\nalice\nlustre";
	char err[256];

	(void)argc;
	(void)argv;
	prom = les_prom_new(&cfg);
	if (!prom || les_prom_start(prom, err, sizeof(err))) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		return 1;
	}
	port = les_prom_port(prom);
	add_record(prom, labels);
	return 0;
}

/*
 * Whether buf holds a whole first answer: its headers and Content-Length
 * bytes of body (none after a HEAD). A kept-alive connection is not
 * closed after it, so waiting for the end would wait for the timeout.
 */
static bool answered(const char *buf, size_t got, bool head)
{
	const char *end = strstr(buf, "\r\n\r\n"), *cl;
	size_t body;

	if (!end)
		return false;
	if (head)
		return true;
	cl = strcasestr(buf, "\r\ncontent-length:");
	if (!cl || cl > end)
		return false; /* no length: read to the end */
	body = (size_t)strtoul(cl + 17, NULL, 10);
	return got - (size_t)(end + 4 - buf) >= body;
}

/* Send the request, read the first answer (0.1 s at most between its pieces). */
static size_t ask(const uint8_t *req, size_t n, char *buf, size_t cap)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {.tv_usec = 20000};
	/*
	 * Closed with a reset, not into TIME_WAIT: at ~1,000 inputs a second
	 * the loopback's 28,232 ephemeral ports were all waiting after 134,267
	 * inputs, and connect failed (EADDRNOTAVAIL).
	 */
	struct linger reset = {.l_onoff = 1, .l_linger = 0};
	bool head = n >= 5 && !memcmp(req, "HEAD ", 5);
	size_t got = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	/*
	 * libFuzzer's timer (-timeout) interrupts a connect now and then; it
	 * goes on in the kernel, and asking again says how it ended. The
	 * timeouts are set after it: SO_SNDTIMEO would bound it too.
	 */
	while (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EISCONN) {
		if (errno == EINTR || errno == EALREADY)
			continue;
		fprintf(stderr, "fuzz_http: connect to the endpoint: %s\n", strerror(errno));
		abort();
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	buf[0] = '\0';
	/*
	 * A request without the empty line that ends its headers gets one:
	 * libmicrohttpd waits for the rest of a request cut short (a
	 * half-close does not end the wait), which would make most inputs a
	 * timeout. Bytes after that line are sent as they are; closing on
	 * them unread, the server may reset the connection and cut its
	 * answer, so an answer not whole is not checked.
	 */
	if (n && send(fd, req, n, MSG_NOSIGNAL) < 0)
		goto out;
	if (!memmem(req, n, "\r\n\r\n", 4) && !memmem(req, n, "\n\n", 2) &&
	    send(fd, "\r\n\r\n", 4, MSG_NOSIGNAL) < 0)
		goto out;
	while (got < cap - 1 && (r = recv(fd, buf + got, cap - 1 - got, 0)) > 0) {
		got += (size_t)r;
		buf[got] = '\0';
		if (answered(buf, got, head))
			break;
	}
out:
	close(fd);
	return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char answer[1 << 20];
	/* Up to the first NUL: libmicrohttpd waits out a request line holding one. */
	const uint8_t *nul = memchr(data, '\0', size);
	size_t got;

	if (nul == data || !size)
		return 0;
	got = ask(data, nul ? (size_t)(nul - data) : size, answer, sizeof(answer));
	if (got >= 12 && !strncmp(answer, "HTTP/1.1 200", 12) && strstr(answer, "# TYPE") &&
	    answered(answer, got, false)) {
		char *start = strstr(answer, "\r\n\r\n") + 4;

		check_exposition(start, got - (size_t)(start - answer));
	}
	return 0;
}
