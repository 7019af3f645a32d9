// SPDX-License-Identifier: MIT
#include <string.h>

#include "builtin.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "run", cmd_run },
	{ "tasks", cmd_tasks },
	{ "report", cmd_report },
	{ "export", cmd_export },
};

int main(int argc, char **argv)
{
	if (argc > 1) {
		for (size_t i = 0;
		     i < sizeof(subcommands) / sizeof(*subcommands); i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].fn(argc - 1, argv + 1);
	}
	/* "iowrap [OPTIONS] -- COMMAND" is "iowrap run". */
	return cmd_run(argc, argv);
}
