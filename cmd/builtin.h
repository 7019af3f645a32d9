/* SPDX-License-Identifier: MIT */
/* One function per subcommand, as git's builtin/ has them. */
#ifndef IOWRAP_BUILTIN_H
#define IOWRAP_BUILTIN_H

int cmd_run(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
