/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The report subcommand: lustre-ebpf-stream report CAPTURE [-o FILE] (sink/report.h). */
#ifndef LES_REPORT_CMD_H
#define LES_REPORT_CMD_H

/* argv[0] is "report"; returns the exit status (0, 1 runtime, 2 usage). */
int les_report_main(int argc, char **argv);

#endif /* LES_REPORT_CMD_H */
