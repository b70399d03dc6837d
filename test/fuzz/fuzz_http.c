// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The /metrics endpoint. The HTTP parsing is libmicrohttpd's; what is ours
 * is the handler (method and URL: the only parts of a request it reads)
 * and what it serves, the exposition text, whose label values come from
 * users (job ids, comms, mount paths). The input: before its first NUL
 * byte, label values ('\n'-separated: job id, process, mount, user, fs
 * type) for one access record added to the store; after it, up to the
 * next NUL, raw bytes sent as a request to the endpoint, started once on
 * 127.0.0.1 with a free port. Every render, and every whole 200 answer,
 * must be text the Prometheus format reads: HELP/TYPE comments and
 * `name{l="v",...} value` samples with escaped values. An answer is waited
 * for 0.1 s: libmicrohttpd answers some broken requests only at its
 * connection timeout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "fuzz_util.h"
#include "les_record.h"
#include "ops.h"
#include "prom.h"

static struct les_prom *prom;
static uint16_t port;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct les_prom_config cfg = {
		.listen = "127.0.0.1:0",
		.path = "/metrics",
		.uid_labels = true,
		.histogram_process = true,
		.max_series = 256, /* the store stays small: renders stay fast */
	};
	char err[256];

	(void)argc;
	(void)argv;
	prom = les_prom_new(&cfg);
	if (!prom || les_prom_start(prom, err, sizeof(err))) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		return 1;
	}
	port = les_prom_port(prom);
	return 0;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* name{k="v",...}: the end of the labels, asserted well formed. */
static const char *labels(const char *p, const char *end)
{
	if (p < end && *p == '{') {
		p++;
		while (p < end && *p != '}') {
			assert(name_char(*p, true));
			while (p < end && name_char(*p, false))
				p++;
			assert(p + 1 < end && p[0] == '=' && p[1] == '"');
			for (p += 2; p < end && *p != '"'; p++) {
				assert(*p != '\n');
				if (*p == '\\') {
					assert(p + 1 < end &&
					       (p[1] == '\\' || p[1] == '"' || p[1] == 'n'));
					p++;
				}
			}
			assert(p < end && *p == '"');
			p++;
			if (p < end && *p == ',')
				p++;
		}
		assert(p < end && *p == '}');
		p++;
	}
	return p;
}

/* The exposition text: every line a comment or a sample. */
static void check_exposition(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char *num_end;

		assert(nl); /* every line ends with a newline */
		if (*p == '#') {
			assert(!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7));
		} else {
			assert(name_char(*p, true));
			while (p < nl && name_char(*p, false))
				p++;
			p = labels(p, nl);
			assert(p < nl && *p == ' ');
			strtod(p + 1, &num_end);
			assert(num_end > p + 1 && num_end <= nl);
		}
		p = nl + 1;
	}
}

static void add_record(char *labels_part)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.op = "read",
		.access_op = LES_OP_READ,
		.latency_ns = 123456,
		.bytes = 4096,
		.uid = 1000,
		.err = 0,
	};
	char *p = labels_part;

	ev.job_id = fuzz_next_line(&p);
	ev.process = ev.comm = fuzz_next_line(&p);
	ev.mount = fuzz_next_line(&p);
	ev.username = fuzz_next_line(&p);
	ev.fs_type = fuzz_next_line(&p);
	ev.fs = ev.mount;
	les_prom_add(prom, &ev);
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
	struct timeval tv = {.tv_usec = 100000};
	bool head = n >= 5 && !memcmp(req, "HEAD ", 5);
	size_t got = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	assert(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
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
	static char answer[4 << 20];
	const uint8_t *nul = memchr(data, '\0', size);
	size_t len, got;
	char *body;

	if (nul) {
		char *lab = strndup((const char *)data, (size_t)(nul - data));

		if (!lab)
			return 0;
		add_record(lab);
		free(lab);
		size -= (size_t)(nul + 1 - data);
		data = nul + 1;
	}
	body = les_prom_render(prom, &len);
	if (body) {
		assert(strlen(body) == len);
		check_exposition(body, len);
		free(body);
	}
	/* Up to the next NUL: libmicrohttpd waits out a request line holding one. */
	nul = memchr(data, '\0', size);
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
