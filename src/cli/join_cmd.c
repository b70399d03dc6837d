// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream join [-o FILE] [--hostname NAME] CAPTURE...: the
 * client-server join of captures written on different nodes (a client's
 * and its servers'), as the consumer joins both sides on one node.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/join_cmd.h"
#include "cli/options.h"
#include "sink/join_replay.h"

static const char usage[] =
	"Usage: lustre-ebpf-stream join [-o FILE] [--hostname NAME] CAPTURE...\n"
	"Join the PtlRPC client requests (rpc) and server records (srv) of the\n"
	"captures (JSON Lines, gzip or not; - for stdin) on (server NID, xid), as\n"
	"the consumer does on one node: one rpc_join line per pair, then a\n"
	"join_counts line (joined, and by side unjoined, no_key, duplicate).\n"
	"  -o, --output FILE    write there (default: stdout)\n"
	"      --hostname NAME  the rpc_join lines' host (default: this host's name)\n"
	"  -h, --help           this text\n";

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "lustre-ebpf-stream join: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return LES_EXIT_USAGE;
}

int les_join_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"hostname", required_argument, NULL, 'H'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct les_join_replay_config cfg = {.out = stdout};
	struct les_join_replay_stats st;
	const char *output = NULL;
	char host[256] = "unknown", err[512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'H':
			snprintf(host, sizeof(host), "%s", optarg);
			cfg.host = host;
			break;
		case 'h':
			fputs(usage, stdout);
			return LES_EXIT_OK;
		default:
			return LES_EXIT_USAGE; /* getopt printed why */
		}
	}
	if (optind >= argc)
		return usage_error("no capture given", NULL);
	if (!cfg.host) {
		gethostname(host, sizeof(host) - 1);
		cfg.host = host;
	}
	cfg.inputs = (const char *const *)argv + optind;
	cfg.n_inputs = (size_t)(argc - optind);
	if (output && !(cfg.out = fopen(output, "w"))) {
		fprintf(stderr, "lustre-ebpf-stream join: %s: %s\n", output, strerror(errno));
		return LES_EXIT_RUNTIME;
	}
	ret = les_join_replay_run(&cfg, &st, err, sizeof(err));
	if (output && fclose(cfg.out) && !ret)
		ret = -1, snprintf(err, sizeof(err), "%s: %s", output, strerror(errno));
	if (ret) {
		fprintf(stderr, "lustre-ebpf-stream join: %s\n", err);
		return LES_EXIT_RUNTIME;
	}
	return LES_EXIT_OK;
}
