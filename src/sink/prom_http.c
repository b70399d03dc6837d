// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus endpoint: the HTTP server (libmicrohttpd's thread) serving
 * the scrape, /healthz and a landing page.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "util/clock.h"
#include "sink/prom_store.h"

/* --- HTTP ------------------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_ctx)
{
	static char landing[] = "<html><head><title>lustre-ebpf-stream</title></head><body>"
				"<h1>lustre-ebpf-stream</h1><p><a href=\"metrics\">Metrics</a>, "
				"<a href=\"healthz\">health</a></p>"
				"</body></html>\n";
	static char not_found[] = "not found\n";
	static char not_allowed[] = "method not allowed\n";
	static char no_memory[] = "out of memory\n";
	struct les_prom *p = cls;
	char *body;
	size_t len;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)req_ctx;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, p->path) == 0) {
		body = les_prom_render(p, &len);
		if (!body)
			return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, no_memory,
				     sizeof(no_memory) - 1, MHD_RESPMEM_PERSISTENT, "text/plain");
		return reply(conn, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE,
			     "text/plain; version=0.0.4; charset=utf-8");
	}
	if (strcmp(url, "/healthz") == 0) {
		char health[256];
		int status = les_prom_health(p, les_mono_ns(), health, sizeof(health), &len);

		return reply(conn, (unsigned int)status, health, len, MHD_RESPMEM_MUST_COPY,
			     "application/json");
	}
	if (strcmp(url, "/") == 0)
		return reply(conn, MHD_HTTP_OK, landing, sizeof(landing) - 1,
			     MHD_RESPMEM_PERSISTENT, "text/html");
	return reply(conn, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1,
		     MHD_RESPMEM_PERSISTENT, "text/plain");
}

int les_prom_parse_listen(const char *s, char *host, size_t host_cap, uint16_t *port)
{
	const char *colon, *h = s, *port_s;
	size_t host_len;
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		h = s + 1;
		host_len = (size_t)(end - h);
		port_s = end + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) /* bare IPv6 needs brackets */
			return -EINVAL;
		host_len = (size_t)(colon - s);
		port_s = colon + 1;
	}
	if (host_len >= host_cap || !*port_s || strlen(port_s) > 5)
		return -EINVAL;
	for (const char *c = port_s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	if (v > 65535)
		return -EINVAL;
	memcpy(host, h, host_len);
	host[host_len] = '\0';
	*port = (uint16_t)v;
	return 0;
}

#define LOG_INTERVAL_NS (10 * LES_NS_PER_SEC)

/*
 * microhttpd's messages, at most one per LOG_INTERVAL_NS: a client that
 * connects in a loop past the limits makes one per connection.
 */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	struct les_prom *p = cls;
	uint64_t now = les_mono_ns();

	if (p->starting)
		return;
	if (p->log_next_ns && now < p->log_next_ns) {
		p->log_held++;
		return;
	}
	if (p->log_held)
		fprintf(stderr, "lustre-ebpf-stream: microhttpd: %" PRIu64 " messages not shown\n",
			p->log_held);
	fputs("lustre-ebpf-stream: microhttpd: ", stderr);
	vfprintf(stderr, fmt, ap);
	p->log_held = 0;
	p->log_next_ns = now + LOG_INTERVAL_NS;
}

/*
 * The limits per client: a client that opens connections and sends half
 * a request (slowloris) holds at most LES_PROM_PER_IP_CONNECTIONS of the
 * LES_PROM_CONNECTIONS, each for LES_PROM_CONNECTION_TIMEOUT_S without a
 * byte; the scrapers on other addresses keep the rest.
 */
static struct MHD_Daemon *start_on(struct les_prom *p, unsigned int flags, uint16_t port,
				   const struct sockaddr *addr)
{
	flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	return MHD_start_daemon(
		flags, port, NULL, NULL, on_request, p, MHD_OPTION_EXTERNAL_LOGGER, http_log, p,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)LES_PROM_CONNECTION_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)LES_PROM_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)LES_PROM_PER_IP_CONNECTIONS,
		/* Last: without an address, the list ends here. */
		addr ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, addr, MHD_OPTION_END);
}

static struct MHD_Daemon *start_daemon(struct les_prom *p, const char *host, uint16_t port,
				       int *gai_err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	struct MHD_Daemon *d = NULL;
	char port_s[8];

	if (!*host) {
		/* All addresses: IPv6 with IPv4 mapped, or IPv4 alone without IPv6. */
		d = start_on(p, MHD_USE_DUAL_STACK, port, NULL);
		return d ? d : start_on(p, 0, port, NULL);
	}
	snprintf(port_s, sizeof(port_s), "%u", (unsigned int)port);
	*gai_err = getaddrinfo(host, port_s, &hints, &res);
	if (*gai_err)
		return NULL;
	for (ai = res; ai && !d; ai = ai->ai_next)
		d = start_on(p, ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0, port, ai->ai_addr);
	freeaddrinfo(res);
	return d;
}

int les_prom_start(struct les_prom *p, char *err, size_t errlen)
{
	char host[LES_PROM_HOST_MAX];
	const union MHD_DaemonInfo *info;
	sigset_t block, old;
	int gai_err = 0;
	uint16_t port;

	if (les_prom_parse_listen(p->cfg.listen, host, sizeof(host), &port)) {
		snprintf(err, errlen, "invalid listen address '%s'", p->cfg.listen);
		return -EINVAL;
	}
	/* The HTTP thread inherits this mask: signals stay with the main thread. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	errno = 0;
	p->starting = true;
	p->httpd = start_daemon(p, host, port, &gai_err);
	p->starting = false;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->httpd) {
		if (gai_err)
			snprintf(err, errlen, "cannot resolve '%s': %s", host,
				 gai_strerror(gai_err));
		else
			snprintf(err, errlen, "cannot listen on %s%s%s", p->cfg.listen,
				 errno ? ": " : "", errno ? strerror(errno) : "");
		return -EADDRNOTAVAIL;
	}
	info = MHD_get_daemon_info(p->httpd, MHD_DAEMON_INFO_BIND_PORT);
	p->port = info ? info->port : port;
	return 0;
}

uint16_t les_prom_port(const struct les_prom *p)
{
	return p->port;
}

void prom_http_stop(struct les_prom *p)
{
	if (p->httpd)
		MHD_stop_daemon(p->httpd);
}

int les_prom_open(struct les_prom **out, const struct les_prom_config *cfg, char *err,
		  size_t errlen)
{
	struct les_prom *p;
	int ret;

	*out = NULL;
	p = les_prom_new(cfg);
	if (!p) {
		snprintf(err, errlen, "--prometheus: out of memory");
		return -ENOMEM;
	}
	ret = les_prom_start(p, err, errlen);
	if (ret) {
		les_prom_free(p);
		return ret;
	}
	*out = p;
	return 0;
}
