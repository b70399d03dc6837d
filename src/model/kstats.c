// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel side's numbers as JSON members, for the stats record and --list-probes. */
#include "model/kstats.h"

void les_refusals_json(struct jw *w, const struct les_refusals *refused)
{
	jw_key(w, "programs_refused");
	jw_arr_begin(w);
	for (size_t i = 0; refused && i < refused->n; i++) {
		jw_obj_begin(w);
		jw_kv_cstr(w, "program", refused->r[i].prog);
		jw_kv_cstr(w, "reason", refused->r[i].reason);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
