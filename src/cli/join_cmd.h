/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The join subcommand: lustre-ebpf-stream join [-o FILE] CAPTURE... (sink/join_replay.h). */
#ifndef LES_JOIN_CMD_H
#define LES_JOIN_CMD_H

/* argv[0] is "join"; returns the exit status (0, 1 runtime, 2 usage). */
int les_join_main(int argc, char **argv);

#endif /* LES_JOIN_CMD_H */
