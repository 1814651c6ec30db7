// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the table line and message grammar of dm-ioband:
 * the input is split on spaces into an argument vector, as dmsetup does,
 * and given to both parsers.  Whatever they accept must also satisfy the
 * invariants the target relies on.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioband.h>

#define MAX_ARGS 256

/* A cost model is all six parameters, each 1 to 10^12, or none. */
static void check_model(const struct ioband_cost_model *m)
{
	unsigned int i;

	for (i = 0; i < IOBAND_MODEL_NR_PARAMS; i++)
		if (!m->param[i] != !m->param[0] ||
		    m->param[i] > IOBAND_MODEL_PARAM_MAX)
			abort();
}

static void check_table(const struct ioband_table *t)
{
	u32 i, j;

	if (t->dg.io_throttle > t->dg.io_limit ||
	    t->dg.io_limit < 1 || t->dg.io_limit > IOBAND_IO_LIMIT_MAX ||
	    t->dg.token_base < 1 || t->dg.token_base > IOBAND_TOKEN_BASE_MAX ||
	    !t->dg_name[0] || strlen(t->dg_name) > IOBAND_DG_NAME_MAX)
		abort();
	check_model(&t->dg.model);
	for (i = 0; i < t->nr_groups; i++) {
		const struct ioband_group_conf *g = &t->groups[i];

		if (g->id < 0)
			abort();
		if (t->dg.policy != IOBAND_POLICY_RANGE_BW &&
		    (g->weight < IOBAND_WEIGHT_MIN ||
		     g->weight > IOBAND_WEIGHT_MAX))
			abort();
		if (g->max_kbps && g->min_kbps > g->max_kbps)
			abort();
		for (j = 0; j < i; j++)
			if (t->groups[j].id == g->id)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct ioband_group_conf groups[MAX_ARGS];
	char *buf = malloc(size + 1);
	char *argv[MAX_ARGS];
	unsigned int argc = 0;
	struct ioband_table t;
	struct ioband_msg m;
	char *error = NULL;
	char *tok, *save;

	memcpy(buf, data, size);
	buf[size] = 0;
	for (tok = strtok_r(buf, " \t\n", &save); tok && argc < MAX_ARGS;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = tok;

	memset(&t, 0, sizeof(t));
	t.groups = groups;
	if (!ioband_parse_table(argc, argv, &t, &error))
		check_table(&t);
	else if (!error)
		abort();

	memset(&m, 0, sizeof(m));
	error = NULL;
	if (!ioband_parse_message(argc, argv, &m, &error)) {
		if (m.kind == IOBAND_MSG_COST_MODEL)
			check_model(&m.model);
	} else if (!error) {
		abort();
	}
	free(buf);
	return 0;
}
