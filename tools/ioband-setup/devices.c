// SPDX-License-Identifier: GPL-2.0
/* ioband-setup: the device commands, create and remove. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cmd.h"
#include "names.h"

static const struct opt create_optv[] = { SETUP_OPTV, { NULL, 0, false, 0 } };

int do_create(const char *name, const char *device, const struct setup_opts *o,
		     const char *what)
{
	struct dev_state member;
	struct ioband_table t = { 0 };
	struct pg_state paths = { 0 };
	struct dm_target_line line;
	struct stat sb;
	uint64_t sectors;
	char devstr[32], *params = NULL;
	int rc;

	rc = block_device(device, &sb, &sectors, true);
	if (rc)
		return rc;
	snprintf(devstr, sizeof(devstr), "%u:%u", major(sb.st_rdev), minor(sb.st_rdev));
	memset(&member, 0, sizeof(member));
	rc = dry_run ? EX_OK : dg_settings(o->dg ? o->dg : name, &member);
	if (rc)
		return rc;
	rc = build_table(o, devstr, name, member.name[0] ? &member.t : NULL, &t, &paths, what);
	dev_state_free(&member);
	if (rc)
		return rc;
	if (dry_run) {
		note("%s: would create over %s (%s)", what, device, devstr);
		goto out;
	}
	params = table_format(&t);
	line = (struct dm_target_line){ 0, sectors, (char *)"ioband", params };
	if (verbose)
		fprintf(stderr, "ioband-setup: table: 0 %llu ioband %s\n",
			(unsigned long long)sectors, params);
	if (dmx_fault("create") || dmx_create(name, NULL, &line, 1, false, 0)) {
		const char *why = dmx_why();

		rc = errorf(EX_FAIL, "%s: the kernel refused the table (ioband %s): %s%s", what,
			    params, why, strstr(why, "unknown target type") ?
			    " (is the dm-ioband module loaded? modprobe dm-ioband)" : "");
		goto out;
	}
	if (o->carryover >= 0) {
		char msg[32];

		snprintf(msg, sizeof(msg), "carryover %lld", (long long)o->carryover);
		if (dmx_fault("create-carryover") || send_message(name, msg)) {
			char why[600];

			snprintf(why, sizeof(why), "%s", dmx_why());
			if (dmx_remove(name)) {
				rc = errorf(EX_HALFDONE, "%s: created, but setting its carryover failed (%s) and removing it again failed too (%s): remove %s by hand",
					    what, why, dmx_why(), name);
				goto out;
			}
			rc = errorf(EX_FAIL, "%s: setting the carryover failed (%s); removed %s again",
				    what, why, name);
			goto out;
		}
	}
	note("%s: created /dev/mapper/%s over %s (%s), device group %s, type %s, policy %s, %zu group%s attached",
	     what, name, device, devstr, t.dg, gtype_names[t.type], policy_names[t.policy],
	     t.ngroups, t.ngroups == 1 ? "" : "s");
	rc = state_replace_dev(name, &paths);
out:
	pg_free(&paths);
	free(params);
	table_free(&t);
	return rc;
}

int cmd_create(int argc, char **argv)
{
	struct optstate st;
	struct setup_opts o;
	struct dmx_info info;
	const char *name;
	bool help;
	int rc, nset;

	opt_begin(&st, argc, argv);
	setup_opts_init(&o);
	rc = parse_setup_opts(&st, create_optv, &o, &help, NULL, &nset);
	if (help) {
		rc = help_exit();
		goto out;
	}
	if (rc)
		goto out;
	if (st.npos != 2) {
		rc = usage_error("expected NAME and DEVICE");
		goto out;
	}
	name = st.pos[0];
	if (!dm_name_valid(name)) {
		rc = errorf(EX_USAGE, "'%s' is not a valid device name (1 to %d characters, no '/' or blanks)",
			    name, DM_NAME_MAX);
		goto out;
	}
	if (dmx_info(name, &info)) {
		rc = errorf(EX_FAIL, "%s: %s", name, dmx_why());
		goto out;
	}
	if (info.exists) {
		rc = errorf(EX_CONFLICT, "a device named '%s' exists already", name);
		goto out;
	}
	rc = state_lock();
	if (!rc) {
		rc = do_create(name, st.pos[1], &o, name);
		state_unlock();
	}
out:
	setup_opts_free(&o);
	free(st.pos);
	return rc;
}

int cmd_remove(int argc, char **argv)
{
	struct optstate st;
	struct dev_state d;
	char name[DM_NAME_MAX + 1];
	bool help;
	int rc;

	opt_begin(&st, argc, argv);
	rc = flag_opts(&st, NULL, NULL, &help);
	if (rc || help)
		return flag_opts_exit(&st, rc, help);
	if (st.npos != 1)
		return usage_error("expected one NAME");
	rc = resolve_name(st.pos[0], name, sizeof(name));
	if (rc)
		return rc;
	rc = state_lock();
	if (rc)
		return rc;
	rc = load_ioband(name, &d, false);
	if (rc) {
		state_unlock();
		return rc;
	}
	if (d.wraps) {
		rc = errorf(EX_CONFLICT, "'%s' is the wrapped logical volume %s: use 'ioband-setup unwrap %s'",
			    name, d.wraps, d.wraps);
		goto out;
	}
	if (dmx_fault("remove") || dmx_remove(name)) {
		if (dmx_errno == EBUSY) {
			struct dmx_info info;

			dmx_info(name, &info);
			rc = errorf(EX_CONFLICT, "'%s' is in use (open count %d): unmount it or stop what holds it open",
				    name, info.open_count);
		} else {
			rc = errorf(EX_FAIL, "removing '%s' failed: %s", name, dmx_why());
		}
		goto out;
	}
	note("removed %s", name);
	rc = state_replace_dev(name, &(struct pg_state){ 0 });
out:
	state_unlock();
	dev_state_free(&d);
	free(st.pos);
	return rc;
}

