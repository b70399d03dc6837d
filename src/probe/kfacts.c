// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The running kernel's facts, gathered once (kfacts.h), and their text
 * form for --dump-kernel-facts and --kernel-facts FILE.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "probe/kfacts.h"
#include "les_record.h"

#define KALLSYMS      "/proc/kallsyms"
#define BLACKLIST     "/sys/kernel/debug/kprobes/blacklist"
#define TRACEFS	      "/sys/kernel/tracing"
#define DEBUGFS_TRACE "/sys/kernel/debug/tracing"
#define FACTS_MAGIC   "kfacts"
#define FACTS_VERSION 1
/* The kernel's ENOTSUPP (not in the uapi errno list). */
#define ENOTSUPP_ERRNO 524

/* --- tracefs ---------------------------------------------------------------- */

const char *les_tracefs_root(void)
{
	if (access(TRACEFS "/events", F_OK) == 0)
		return TRACEFS;
	if (access(DEBUGFS_TRACE "/events", F_OK) == 0)
		return DEBUGFS_TRACE;
	return NULL;
}

int les_ensure_tracefs(void)
{
	if (les_tracefs_root())
		return 0;
	if (mount("tracefs", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return les_tracefs_root() ? 0 : -ENOENT;
}

/* --- wants ------------------------------------------------------------------ */

static void copy_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/* Whether name is among the n names of length stride at list. */
static bool listed(const char *list, size_t stride, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list + i * stride, name) == 0)
			return true;
	return false;
}

/* Copy name in unless it is there, too long or the list full. */
static void add_name(char *list, size_t stride, size_t *n, size_t max, const char *name)
{
	if (*n == max || strlen(name) >= stride || listed(list, stride, *n, name))
		return;
	memcpy(list + *n * stride, name, strlen(name) + 1);
	(*n)++;
}

void les_kf_want_func(struct les_kf_wants *w, const char *name)
{
	add_name(w->func[0], sizeof(w->func[0]), &w->n_func, LES_KF_WANT_MAX, name);
}

void les_kf_want_module(struct les_kf_wants *w, const char *name)
{
	add_name(w->module[0], sizeof(w->module[0]), &w->n_module, LES_KF_MODULES_MAX, name);
}

void les_kf_want_tracepoint(struct les_kf_wants *w, const char *name)
{
	add_name(w->tracepoint[0], sizeof(w->tracepoint[0]), &w->n_tracepoint, LES_KF_TPS_MAX,
		 name);
}

void les_kf_want_type(struct les_kf_wants *w, const char *name, int kind)
{
	for (size_t i = 0; i < w->n_type; i++)
		if (w->type[i].kind == kind && strcmp(w->type[i].name, name) == 0)
			return;
	if (w->n_type == LES_KF_TYPES_MAX || strlen(name) >= sizeof(w->type[0].name))
		return;
	copy_name(w->type[w->n_type].name, sizeof(w->type[0].name), name);
	w->type[w->n_type++].kind = kind;
}

/* Each member of "a|b" as "ops_struct.a", "ops_struct.b". */
void les_kf_want_member(struct les_kf_wants *w, const char *ops_struct, const char *members)
{
	const char *p = members;

	while (*p) {
		size_t len = strcspn(p, "|");
		char name[LES_KF_NAME_LEN];

		snprintf(name, sizeof(name), "%s.%.*s", ops_struct, (int)len, p);
		add_name(w->member[0], sizeof(w->member[0]), &w->n_member, LES_KF_WANT_MAX, name);
		p += len + (p[len] == '|');
	}
}

/* --- questions ---------------------------------------------------------------- */

const struct les_kf_sym *les_kfacts_sym(const struct les_kfacts *f, const char *name)
{
	for (size_t i = 0; i < f->n_sym; i++)
		if (strcmp(f->sym[i].name, name) == 0)
			return &f->sym[i];
	return NULL;
}

/*
 * GCC's names for a copy of a function it changed: constant arguments
 * propagated (.constprop.N), arguments removed or split (.isra.N), a part
 * split out (.part.N). Its arguments are not the source's, so a probe
 * written for the source must not read them. ".cold" parts are not entry
 * points at all.
 */
static bool clone_suffix(const char *s)
{
	static const char *const kinds[] = {".constprop.", ".isra.", ".part."};

	if (strstr(s, ".cold"))
		return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(s, kinds[i], strlen(kinds[i])) == 0)
			return true;
	return false;
}

const struct les_kf_sym *les_kfacts_clone(const struct les_kfacts *f, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < f->n_sym; i++)
		if (strncmp(f->sym[i].name, name, len) == 0 && clone_suffix(f->sym[i].name + len))
			return &f->sym[i];
	return NULL;
}

const struct les_kf_proto *les_kfacts_proto(const struct les_kfacts *f, const char *name,
					    const char *btf)
{
	for (size_t i = 0; i < f->n_proto; i++)
		if (strcmp(f->proto[i].name, name) == 0 && strcmp(f->proto[i].btf, btf) == 0)
			return &f->proto[i];
	return NULL;
}

static const struct les_kf_module *module_of(const struct les_kfacts *f, const char *name)
{
	for (size_t i = 0; i < f->n_module; i++)
		if (strcmp(f->module[i].name, name) == 0)
			return &f->module[i];
	return NULL;
}

bool les_kfacts_module_loaded(const struct les_kfacts *f, const char *module)
{
	const struct les_kf_module *m = module_of(f, module);

	return strcmp(module, "vmlinux") == 0 || (m && m->loaded);
}

bool les_kfacts_module_btf(const struct les_kfacts *f, const char *module)
{
	const struct les_kf_module *m = module_of(f, module);

	/* Function probes only ask for vmlinux when the kernel has BTF at all. */
	return strcmp(module, "vmlinux") == 0 || (m && m->btf);
}

bool les_kfacts_has_type(const struct les_kfacts *f, const char *name, int kind, const char *btf)
{
	for (size_t i = 0; i < f->n_type; i++)
		if (f->type[i].kind == kind && strcmp(f->type[i].name, name) == 0 &&
		    (!btf || strcmp(f->type[i].btf, btf) == 0))
			return true;
	return false;
}

bool les_kfacts_has_tracepoint(const struct les_kfacts *f, const char *category, const char *event)
{
	char name[LES_KF_NAME_LEN];

	snprintf(name, sizeof(name), "%s:%s", category, event);
	for (size_t i = 0; i < f->n_tracepoint; i++)
		if (strcmp(f->tracepoint[i], name) == 0)
			return true;
	return false;
}

/* --- errno names ------------------------------------------------------------ */

static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{EPERM, "EPERM"},   {ENOENT, "ENOENT"},		{ESRCH, "ESRCH"},
	{E2BIG, "E2BIG"},   {EBADF, "EBADF"},		{EACCES, "EACCES"},
	{EFAULT, "EFAULT"}, {EBUSY, "EBUSY"},		{EEXIST, "EEXIST"},
	{ENODEV, "ENODEV"}, {EINVAL, "EINVAL"},		{ENOSPC, "ENOSPC"},
	{ENOSYS, "ENOSYS"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOTSUPP_ERRNO, "ENOTSUPP"},
};

const char *les_kf_errno_name(int err, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	snprintf(buf, len, "%d", err);
	return buf;
}

static int errno_parse(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strcmp(errno_names[i].name, s) == 0)
			return errno_names[i].err;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 4095)
		return -1;
	return (int)v;
}

/* --- gathering: kallsyms and the kprobe blacklist ------------------------- */

static int cmp_name_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether kallsyms' name is a wanted function (sorted) or a clone of one. */
static bool sym_wanted(const char *const *sorted, size_t n, const char *name)
{
	size_t base = strcspn(name, ".");
	char buf[LES_KF_NAME_LEN];
	const char *key = buf;

	if (base >= sizeof(buf))
		return false;
	memcpy(buf, name, base);
	buf[base] = 0;
	if (!bsearch(&key, sorted, n, sizeof(*sorted), cmp_name_ptr))
		return false;
	return !name[base] || clone_suffix(name + base);
}

/*
 * Text symbols only; the first one of a name wins, as for kprobes by name.
 * kallsyms has some 10^5 lines: each is looked up among the sorted wants.
 */
static void scan_kallsyms(struct les_kfacts *f, const struct les_kf_wants *w)
{
	const char *sorted[LES_KF_WANT_MAX];
	FILE *in = fopen(KALLSYMS, "re");
	char line[512];

	if (!in)
		return;
	for (size_t i = 0; i < w->n_func; i++)
		sorted[i] = w->func[i];
	qsort(sorted, w->n_func, sizeof(sorted[0]), cmp_name_ptr);
	while (fgets(line, sizeof(line), in) && f->n_sym < LES_KF_SYMS_MAX) {
		char type, name[256], mod[64] = "";
		unsigned long long addr;
		struct les_kf_sym *s;

		if (sscanf(line, "%llx %c %255s [%63[^]]]", &addr, &type, name, mod) < 3)
			continue;
		if ((type != 't' && type != 'T') || strlen(name) >= LES_KF_NAME_LEN ||
		    !sym_wanted(sorted, w->n_func, name) || les_kfacts_sym(f, name))
			continue;
		s = &f->sym[f->n_sym++];
		copy_name(s->name, sizeof(s->name), name);
		copy_name(s->module, sizeof(s->module), mod[0] ? mod : "vmlinux");
		s->addr = addr;
	}
	fclose(in);
}

static void scan_blacklist(struct les_kfacts *f)
{
	FILE *in = fopen(BLACKLIST, "re");
	char line[512];

	if (!in)
		return; /* debugfs not mounted: the attach itself will tell */
	while (fgets(line, sizeof(line), in)) {
		char name[256];

		if (sscanf(line, "%*s %255s", name) != 1)
			continue;
		for (size_t i = 0; i < f->n_sym; i++)
			if (strcmp(f->sym[i].name, name) == 0)
				f->sym[i].blacklisted = true;
	}
	fclose(in);
}

static bool path_exists(const char *fmt, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), fmt, name);
	return access(path, F_OK) == 0;
}

static void add_module(struct les_kfacts *f, const char *name)
{
	struct les_kf_module *m;

	if (strcmp(name, "vmlinux") == 0 || module_of(f, name) || f->n_module == LES_KF_MODULES_MAX)
		return;
	m = &f->module[f->n_module++];
	copy_name(m->name, sizeof(m->name), name);
	m->loaded = path_exists("/sys/module/%s", name);
	m->btf = path_exists("/sys/kernel/btf/%s", name);
}

/* The wanted modules and those the wanted functions live in. */
static void scan_modules(struct les_kfacts *f, const struct les_kf_wants *w)
{
	for (size_t i = 0; i < w->n_module; i++)
		add_module(f, w->module[i]);
	for (size_t i = 0; i < f->n_sym; i++)
		add_module(f, f->sym[i].module);
}

static void scan_tracepoints(struct les_kfacts *f, const struct les_kf_wants *w)
{
	const char *root = les_tracefs_root();
	char path[512];

	for (size_t i = 0; root && i < w->n_tracepoint; i++) {
		const char *name = w->tracepoint[i];
		size_t cat = strcspn(name, ":");

		if (!name[cat] || f->n_tracepoint == LES_KF_TPS_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/events/%.*s/%s", root, (int)cat, name,
			 name + cat + 1);
		if (access(path, F_OK) == 0)
			copy_name(f->tracepoint[f->n_tracepoint++], LES_KF_NAME_LEN, name);
	}
}

/* --- gathering: BTF ----------------------------------------------------------- */

static const struct btf_type *skip_mods(const struct btf *btf, __u32 id, __u32 *out_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (out_id)
		*out_id = id;
	return t;
}

/* enum les_fn_arg_kind of a parameter type, or LES_KF_ARG_OTHER. */
static unsigned char param_kind(const struct btf *btf, __u32 type_id)
{
	static const char *const structs[LES_FN_ARG_KIND_MAX] = {
		[LES_FN_ARG_FILE] = "file",   [LES_FN_ARG_KIOCB] = "kiocb",
		[LES_FN_ARG_INODE] = "inode", [LES_FN_ARG_DENTRY] = "dentry",
		[LES_FN_ARG_PATH] = "path",
	};
	const struct btf_type *t = skip_mods(btf, type_id, NULL);
	const char *name;

	if (!t || !btf_is_ptr(t))
		return LES_KF_ARG_OTHER;
	t = skip_mods(btf, t->type, NULL);
	if (!t || !btf_is_struct(t))
		return LES_KF_ARG_OTHER;
	name = btf__name_by_offset(btf, t->name_off);
	for (int k = 0; k < LES_FN_ARG_KIND_MAX; k++)
		if (name && strcmp(name, structs[k]) == 0)
			return (unsigned char)k;
	return LES_KF_ARG_OTHER;
}

static unsigned char ret_kind(const struct btf *btf, __u32 type_id)
{
	const struct btf_type *t;

	if (type_id == 0)
		return LES_FN_RET_VOID;
	t = skip_mods(btf, type_id, NULL);
	if (t && btf_is_ptr(t))
		return LES_FN_RET_PTR;
	if (t && (btf_is_int(t) || btf_is_enum(t)) && t->size == 8)
		return LES_FN_RET_LONG;
	return LES_FN_RET_INT;
}

static void add_proto(struct les_kfacts *f, const struct btf *btf, const char *btf_name,
		      const char *name, __u32 proto_id, int btf_id)
{
	const struct btf_type *t = btf__type_by_id(btf, proto_id);
	const struct btf_param *params;
	struct les_kf_proto *p;

	if (!t || !btf_is_func_proto(t) || f->n_proto == LES_KF_PROTOS_MAX)
		return;
	p = &f->proto[f->n_proto++];
	copy_name(p->name, sizeof(p->name), name);
	copy_name(p->btf, sizeof(p->btf), btf_name);
	p->btf_id = btf_id;
	p->nargs = btf_vlen(t);
	params = btf_params(t);
	for (unsigned int i = 0; i < p->nargs && i < LES_KF_ARGS_MAX; i++)
		p->arg[i] = param_kind(btf, params[i].type);
	p->ret = ret_kind(btf, t->type);
}

/* The FUNC_PROTO a member of a VFS operations struct points to, or -1. */
static int member_proto(const struct btf *vmlinux, const char *ops_member)
{
	size_t dot = strcspn(ops_member, ".");
	char ops[LES_KF_NAME_LEN];
	const struct btf_member *m;
	const struct btf_type *st;
	int sid;

	snprintf(ops, sizeof(ops), "%.*s", (int)dot, ops_member);
	sid = btf__find_by_name_kind(vmlinux, ops, BTF_KIND_STRUCT);
	if (sid < 0 || !ops_member[dot])
		return -1;
	st = btf__type_by_id(vmlinux, sid);
	m = btf_members(st);
	for (__u16 i = 0; i < btf_vlen(st); i++, m++) {
		const char *name = btf__name_by_offset(vmlinux, m->name_off);
		const struct btf_type *t;
		__u32 id;

		if (!name || strcmp(name, ops_member + dot + 1) != 0)
			continue;
		t = skip_mods(vmlinux, m->type, NULL);
		if (!t || !btf_is_ptr(t))
			return -1;
		t = skip_mods(vmlinux, t->type, &id);
		return t && btf_is_func_proto(t) ? (int)id : -1;
	}
	return -1;
}

/* A name asked of BTF: a function (BTF_KIND_FUNC) or a type of the wants. */
struct btf_want {
	const char *name;
	int kind;
};

static int cmp_btf_want(const void *a, const void *b)
{
	const struct btf_want *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->kind - y->kind;
}

/* The wanted functions and types, sorted for bsearch; the count. */
static size_t btf_wants(const struct les_kf_wants *w, struct btf_want *out)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n_func; i++)
		out[n++] = (struct btf_want){w->func[i], BTF_KIND_FUNC};
	for (size_t i = 0; i < w->n_type; i++)
		out[n++] = (struct btf_want){w->type[i].name, w->type[i].kind};
	qsort(out, n, sizeof(*out), cmp_btf_want);
	return n;
}

static void add_type(struct les_kfacts *f, const char *btf_name, const char *name, int kind)
{
	struct les_kf_type *t = &f->type[f->n_type];

	if (f->n_type == LES_KF_TYPES_MAX || les_kfacts_has_type(f, name, kind, btf_name))
		return;
	copy_name(t->name, sizeof(t->name), name);
	copy_name(t->btf, sizeof(t->btf), btf_name);
	t->kind = kind;
	f->n_type++;
}

/*
 * What one BTF object holds of the wants, in its own types only: a
 * module's BTF is split BTF whose lookups also answer from vmlinux, its
 * base. first is its first own type id (1 for vmlinux). One pass over its
 * types, each name looked up among the sorted wants.
 */
static void scan_btf(struct les_kfacts *f, const struct btf_want *wants, size_t n_wants,
		     const struct btf *btf, __u32 first, const char *btf_name)
{
	__u32 end = btf__type_cnt(btf);

	for (__u32 id = first; id < end; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		struct btf_want key = {btf__name_by_offset(btf, t->name_off), btf_kind(t)};

		if (!key.name || !key.name[0] ||
		    (key.kind != BTF_KIND_FUNC && key.kind != BTF_KIND_TYPEDEF &&
		     key.kind != BTF_KIND_STRUCT) ||
		    !bsearch(&key, wants, n_wants, sizeof(*wants), cmp_btf_want))
			continue;
		if (key.kind != BTF_KIND_FUNC)
			add_type(f, btf_name, key.name, key.kind);
		else if (!les_kfacts_proto(f, key.name, btf_name))
			add_proto(f, btf, btf_name, key.name, t->type, (int)id);
	}
}

/* vmlinux, the VFS methods' prototypes in it, then each module's BTF once. */
static struct btf *scan_all_btf(struct les_kfacts *f, const struct les_kf_wants *w)
{
	struct btf_want *wants = calloc(w->n_func + w->n_type + 1, sizeof(*wants));
	struct btf *vmlinux = wants ? btf__load_vmlinux_btf() : NULL;
	size_t n_wants = wants ? btf_wants(w, wants) : 0;
	struct dirent *de;
	DIR *dir;

	if (!vmlinux) {
		free(wants);
		return NULL;
	}
	scan_btf(f, wants, n_wants, vmlinux, 1, "vmlinux");
	for (size_t i = 0; i < w->n_member; i++) {
		int id = member_proto(vmlinux, w->member[i]);

		if (id >= 0)
			add_proto(f, vmlinux, "vmlinux", w->member[i], (__u32)id, -1);
	}
	dir = opendir("/sys/kernel/btf");
	while (dir && (de = readdir(dir))) {
		struct btf *mod;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "vmlinux") == 0)
			continue;
		mod = btf__load_module_btf(de->d_name, vmlinux);
		if (!mod)
			continue;
		scan_btf(f, wants, n_wants, mod, btf__type_cnt(vmlinux), de->d_name);
		btf__free(mod);
	}
	if (dir)
		closedir(dir);
	free(wants);
	return vmlinux;
}

/* --- gathering: what the kernel accepts -------------------------------------- */

static const struct bpf_insn return_zero[] = {
	{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	{.code = BPF_JMP | BPF_EXIT},
};

/*
 * Load a do-nothing program of type with opts, link it with attach and
 * lopts for a moment, and say how far the kernel let it go (*err: errno).
 */
static enum les_kf_trial trial(enum bpf_prog_type type, const struct bpf_prog_load_opts *opts,
			       enum bpf_attach_type attach,
			       const struct bpf_link_create_opts *lopts, int *err)
{
	enum les_kf_trial result = LES_KF_OK;
	int fd = bpf_prog_load(type, "les_trial", "GPL", return_zero, 2, opts);
	int link;

	if (fd < 0) {
		*err = errno;
		return LES_KF_LOAD_REFUSED;
	}
	link = bpf_link_create(fd, 0, attach, lopts);
	if (link < 0) {
		*err = errno;
		result = LES_KF_ATTACH_REFUSED;
	} else {
		close(link);
	}
	close(fd);
	return result;
}

/*
 * Load (and attach for a moment) a do-nothing fentry program on vfs_read:
 * a kernel may know BTF and trampolines and still refuse tracing programs
 * (lockdown, or a policy returning EPERM as on the build machines).
 */
static void try_fentry(struct les_kfacts *f, const struct btf *vmlinux)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY);
	int id;

	id = vmlinux ? btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC) : -1;
	if (id < 0) {
		f->fentry = LES_KF_NO_BTF;
		return;
	}
	opts.attach_btf_id = (__u32)id;
	f->fentry = trial(BPF_PROG_TYPE_TRACING, &opts, BPF_TRACE_FENTRY, NULL, &f->fentry_errno);
}

/* An fd of the kernel BTF object called name (a module), or -1. */
static int kernel_btf_fd(const char *name)
{
	__u32 id = 0;

	while (bpf_btf_get_next_id(id, &id) == 0) {
		struct bpf_btf_info info;
		__u32 len = sizeof(info);
		char found[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = (__u64)(unsigned long)found;
		info.name_len = sizeof(found);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.kernel_btf &&
		    strcmp(found, name) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Trampolines of some kernels take at most six arguments (x86 before 6.6):
 * a function with more is tried with a do-nothing fexit program, once.
 */
static void try_fexit_wide(struct les_kf_proto *p)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	bool module = strcmp(p->btf, "vmlinux") != 0;
	int btf_fd = module ? kernel_btf_fd(p->btf) : 0;
	int err = 0;

	if (btf_fd < 0) {
		p->fexit_errno = LES_KF_NO_BTF_OBJECT;
		return;
	}
	opts.attach_btf_id = (__u32)p->btf_id;
	opts.attach_btf_obj_fd = (__u32)btf_fd;
	if (trial(BPF_PROG_TYPE_TRACING, &opts, BPF_TRACE_FEXIT, NULL, &err) == LES_KF_OK)
		p->fexit_errno = 0;
	else
		p->fexit_errno = err > 0 ? err : EINVAL;
	if (module)
		close(btf_fd);
}

static bool kprobes_present(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
	       access(TRACEFS "/kprobe_events", F_OK) == 0 ||
	       access(DEBUGFS_TRACE "/kprobe_events", F_OK) == 0;
}

/*
 * A kprobe_multi (fprobe) link on the first wanted function kallsyms has,
 * by address, so that a module function counts (6.1 to 6.2 could not
 * resolve module symbols by name).
 */
static void try_kprobe_multi(struct les_kfacts *f, const struct les_kf_wants *w)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	const struct les_kf_sym *s = NULL;
	unsigned long a;

	for (size_t i = 0; i < w->n_func && !s; i++) {
		s = les_kfacts_sym(f, w->func[i]);
		if (s && (s->blacklisted || !s->addr))
			s = NULL;
	}
	if (!s)
		return; /* LES_KF_NOT_TRIED */
	a = (unsigned long)s->addr;
	lopts.kprobe_multi.addrs = &a;
	lopts.kprobe_multi.cnt = 1;
	f->kprobe_multi = trial(BPF_PROG_TYPE_KPROBE, &opts, BPF_TRACE_KPROBE_MULTI, &lopts,
				&f->kprobe_multi_errno);
}

/*
 * bpf_get_current_task_btf came with 5.11; 5.10 gets the flavour of the
 * syscall programs that reads the task by probe reads. Asked of the kernel
 * when privileges allow, else told by the release.
 */
static bool kernel_has_task_btf(const char *release)
{
	int r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_get_current_task_btf,
					NULL);
	unsigned int major = 0, minor = 0;

	if (r >= 0)
		return r == 1;
	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 11);
}

/*
 * The bpf_rdonly_cast kfunc (6.2): the syscall programs' flavour that reads
 * a file through it (bpf/compat.h). A kfunc is a function in the kernel's
 * BTF; libbpf finds it there the same way when the program loads.
 */
static bool kernel_has_rdonly_cast(struct btf *vmlinux)
{
	struct btf *own = vmlinux ? NULL : btf__load_vmlinux_btf();
	struct btf *b = vmlinux ? vmlinux : own;
	bool has = b && btf__find_by_name_kind(b, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;

	btf__free(own);
	return has;
}

void les_kfacts_gather(struct les_kfacts *f, const struct les_kf_wants *w)
{
	struct utsname u;
	struct btf *vmlinux;

	memset(f, 0, sizeof(*f));
	les_ensure_tracefs();
	if (uname(&u) == 0)
		copy_name(f->release, sizeof(f->release), u.release);
	scan_kallsyms(f, w);
	scan_blacklist(f);
	scan_modules(f, w);
	scan_tracepoints(f, w);
	vmlinux = scan_all_btf(f, w);
	try_fentry(f, vmlinux);
	f->rdonly_cast = kernel_has_rdonly_cast(vmlinux);
	btf__free(vmlinux);
	for (size_t i = 0; i < f->n_proto && f->fentry == LES_KF_OK; i++)
		if (f->proto[i].btf_id > 0 && f->proto[i].nargs > 6)
			try_fexit_wide(&f->proto[i]);
	f->kprobes = kprobes_present();
	try_kprobe_multi(f, w);
	f->task_btf = kernel_has_task_btf(f->release);
}

/* --- the text form -------------------------------------------------------------- */

static const char *const trial_names[LES_KF_TRIAL_MAX] = {
	[LES_KF_NOT_TRIED] = "not-tried",
	[LES_KF_OK] = "ok",
	[LES_KF_NO_BTF] = "no-btf",
	[LES_KF_LOAD_REFUSED] = "load-refused",
	[LES_KF_ATTACH_REFUSED] = "attach-refused",
};

static const char *const arg_names[LES_FN_ARG_KIND_MAX] = {
	[LES_FN_ARG_FILE] = "file",	[LES_FN_ARG_KIOCB] = "kiocb", [LES_FN_ARG_INODE] = "inode",
	[LES_FN_ARG_DENTRY] = "dentry", [LES_FN_ARG_PATH] = "path",
};

static const char *const ret_names[LES_FN_RET_MAX] = {
	[LES_FN_RET_INT] = "int", [LES_FN_RET_LONG] = "long", [LES_FN_RET_BYTES] = NULL,
	[LES_FN_RET_PTR] = "ptr", [LES_FN_RET_VOID] = "void",
};

static const struct {
	int kind;
	const char *name;
} kind_names[] = {
	{BTF_KIND_TYPEDEF, "typedef"},
	{BTF_KIND_STRUCT, "struct"},
	{BTF_KIND_FUNC, "func"},
};

static const char *kind_name(int kind)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (kind_names[i].kind == kind)
			return kind_names[i].name;
	return "?";
}

static void write_trial(FILE *out, const char *what, enum les_kf_trial t, int err)
{
	char buf[16];

	fprintf(out, "%s %s", what, trial_names[t]);
	if (t == LES_KF_LOAD_REFUSED || t == LES_KF_ATTACH_REFUSED)
		fprintf(out, " %s", les_kf_errno_name(err, buf, sizeof(buf)));
	fputc('\n', out);
}

static void write_proto(FILE *out, const struct les_kf_proto *p)
{
	char buf[16];

	fprintf(out, "proto %s %s %s", p->name, p->btf, ret_names[p->ret]);
	for (unsigned int i = 0; i < p->nargs && i < LES_KF_ARGS_MAX; i++)
		fprintf(out, " %s", p->arg[i] < LES_FN_ARG_KIND_MAX ? arg_names[p->arg[i]] : "-");
	fputc('\n', out);
	if (p->fexit_errno == LES_KF_NO_BTF_OBJECT)
		fprintf(out, "fexit %s %s no-btf-object\n", p->name, p->btf);
	else if (p->fexit_errno)
		fprintf(out, "fexit %s %s %s\n", p->name, p->btf,
			les_kf_errno_name(p->fexit_errno, buf, sizeof(buf)));
}

void les_kfacts_write(const struct les_kfacts *f, FILE *out)
{
	fprintf(out,
		"# lustre-ebpf-stream kernel facts (--dump-kernel-facts); read back\n"
		"# by --kernel-facts FILE --list-probes. Addresses are left out.\n"
		"%s %d\nrelease %s\n",
		FACTS_MAGIC, FACTS_VERSION, f->release[0] ? f->release : "unknown");
	write_trial(out, "fentry", f->fentry, f->fentry_errno);
	fprintf(out, "kprobes %s\n", f->kprobes ? "yes" : "no");
	write_trial(out, "kprobe_multi", f->kprobe_multi, f->kprobe_multi_errno);
	fprintf(out, "task_btf %s\n", f->task_btf ? "yes" : "no");
	fprintf(out, "rdonly_cast %s\n", f->rdonly_cast ? "yes" : "no");
	for (size_t i = 0; i < f->n_module; i++)
		fprintf(out, "module %s%s%s\n", f->module[i].name,
			f->module[i].loaded ? " loaded" : "", f->module[i].btf ? " btf" : "");
	for (size_t i = 0; i < f->n_tracepoint; i++)
		fprintf(out, "tracepoint %s\n", f->tracepoint[i]);
	for (size_t i = 0; i < f->n_type; i++)
		fprintf(out, "type %s %s %s\n", kind_name(f->type[i].kind), f->type[i].name,
			f->type[i].btf);
	for (size_t i = 0; i < f->n_sym; i++)
		fprintf(out, "sym %s %s%s\n", f->sym[i].name, f->sym[i].module,
			f->sym[i].blacklisted ? " blacklisted" : "");
	for (size_t i = 0; i < f->n_proto; i++)
		write_proto(out, &f->proto[i]);
}

#define TOKENS_MAX (LES_KF_ARGS_MAX + 4)

struct facts_line {
	unsigned int no;
	char *tok[TOKENS_MAX];
	int n;
	char *err;
	size_t err_len;
};

__attribute__((format(printf, 2, 3))) static int bad(struct facts_line *l, const char *fmt, ...)
{
	int used = snprintf(l->err, l->err_len, "line %u: ", l->no);
	va_list ap;

	va_start(ap, fmt);
	if (used >= 0 && (size_t)used < l->err_len)
		vsnprintf(l->err + used, l->err_len - (size_t)used, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int name_into(struct facts_line *l, char *dst, size_t len, const char *src)
{
	if (strlen(src) >= len)
		return bad(l, "name too long: '%.40s...'", src);
	copy_name(dst, len, src);
	return 0;
}

static int index_of(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

static int parse_yes_no(struct facts_line *l, bool *out)
{
	if (l->n != 2 || (strcmp(l->tok[1], "yes") && strcmp(l->tok[1], "no")))
		return bad(l, "'%s' takes yes or no", l->tok[0]);
	*out = strcmp(l->tok[1], "yes") == 0;
	return 0;
}

static int parse_trial(struct facts_line *l, enum les_kf_trial *t, int *err)
{
	int i = l->n >= 2 ? index_of(trial_names, LES_KF_TRIAL_MAX, l->tok[1]) : -1;
	bool refused = i == LES_KF_LOAD_REFUSED || i == LES_KF_ATTACH_REFUSED;

	if (i < 0 || l->n != (refused ? 3 : 2))
		return bad(l,
			   "'%s' takes ok, not-tried, no-btf, load-refused ERRNO or "
			   "attach-refused ERRNO",
			   l->tok[0]);
	*t = (enum les_kf_trial)i;
	*err = refused ? errno_parse(l->tok[2]) : 0;
	if (*err < 0)
		return bad(l, "'%s' is not an errno", l->tok[2]);
	return 0;
}

static int parse_module(struct les_kfacts *f, struct facts_line *l)
{
	struct les_kf_module *m = &f->module[f->n_module];

	if (l->n < 2 || l->n > 4)
		return bad(l, "'module' takes NAME [loaded] [btf]");
	if (f->n_module == LES_KF_MODULES_MAX)
		return bad(l, "more than %d modules", LES_KF_MODULES_MAX);
	for (int i = 2; i < l->n; i++) {
		if (strcmp(l->tok[i], "loaded") == 0)
			m->loaded = true;
		else if (strcmp(l->tok[i], "btf") == 0)
			m->btf = true;
		else
			return bad(l, "module: unknown flag '%s'", l->tok[i]);
	}
	f->n_module++;
	return name_into(l, m->name, sizeof(m->name), l->tok[1]);
}

static int parse_sym(struct les_kfacts *f, struct facts_line *l)
{
	struct les_kf_sym *s = &f->sym[f->n_sym];

	if (l->n < 3 || l->n > 4 || (l->n == 4 && strcmp(l->tok[3], "blacklisted")))
		return bad(l, "'sym' takes NAME MODULE [blacklisted]");
	if (f->n_sym == LES_KF_SYMS_MAX)
		return bad(l, "more than %d symbols", LES_KF_SYMS_MAX);
	s->blacklisted = l->n == 4;
	f->n_sym++;
	return name_into(l, s->name, sizeof(s->name), l->tok[1])
		       ?: name_into(l, s->module, sizeof(s->module), l->tok[2]);
}

static int parse_proto(struct les_kfacts *f, struct facts_line *l)
{
	struct les_kf_proto *p = &f->proto[f->n_proto];
	int ret = l->n >= 4 ? index_of(ret_names, LES_FN_RET_MAX, l->tok[3]) : -1;

	if (ret < 0)
		return bad(l, "'proto' takes NAME BTF RET [ARG...], RET one of int, long, ptr, "
			      "void");
	if (f->n_proto == LES_KF_PROTOS_MAX)
		return bad(l, "more than %d prototypes", LES_KF_PROTOS_MAX);
	p->ret = (unsigned char)ret;
	p->nargs = (unsigned int)(l->n - 4);
	for (int i = 4; i < l->n; i++) {
		int k = index_of(arg_names, LES_FN_ARG_KIND_MAX, l->tok[i]);

		if (k < 0 && strcmp(l->tok[i], "-"))
			return bad(l,
				   "proto: unknown argument kind '%s' (file, kiocb, inode, "
				   "dentry, path or -)",
				   l->tok[i]);
		p->arg[i - 4] = k < 0 ? LES_KF_ARG_OTHER : (unsigned char)k;
	}
	f->n_proto++;
	return name_into(l, p->name, sizeof(p->name), l->tok[1])
		       ?: name_into(l, p->btf, sizeof(p->btf), l->tok[2]);
}

static int parse_fexit(struct les_kfacts *f, struct facts_line *l)
{
	struct les_kf_proto *p;

	if (l->n != 4)
		return bad(l, "'fexit' takes NAME BTF ERRNO|no-btf-object");
	p = (struct les_kf_proto *)les_kfacts_proto(f, l->tok[1], l->tok[2]);
	if (!p)
		return bad(l, "fexit: no 'proto %s %s' line before it", l->tok[1], l->tok[2]);
	p->fexit_errno = strcmp(l->tok[3], "no-btf-object") == 0 ? LES_KF_NO_BTF_OBJECT
								 : errno_parse(l->tok[3]);
	if (p->fexit_errno == -1 && strcmp(l->tok[3], "no-btf-object"))
		return bad(l, "'%s' is not an errno", l->tok[3]);
	return 0;
}

static int parse_type(struct les_kfacts *f, struct facts_line *l)
{
	struct les_kf_type *t = &f->type[f->n_type];
	int k = -1;

	for (size_t i = 0; l->n == 4 && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (strcmp(kind_names[i].name, l->tok[1]) == 0)
			k = kind_names[i].kind;
	if (k < 0)
		return bad(l, "'type' takes KIND NAME BTF, KIND one of typedef, struct, func");
	if (f->n_type == LES_KF_TYPES_MAX)
		return bad(l, "more than %d types", LES_KF_TYPES_MAX);
	t->kind = k;
	f->n_type++;
	return name_into(l, t->name, sizeof(t->name), l->tok[2])
		       ?: name_into(l, t->btf, sizeof(t->btf), l->tok[3]);
}

static int parse_tracepoint(struct les_kfacts *f, struct facts_line *l)
{
	if (l->n != 2 || !strchr(l->tok[1], ':'))
		return bad(l, "'tracepoint' takes CATEGORY:EVENT");
	if (f->n_tracepoint == LES_KF_TPS_MAX)
		return bad(l, "more than %d tracepoints", LES_KF_TPS_MAX);
	return name_into(l, f->tracepoint[f->n_tracepoint++], LES_KF_NAME_LEN, l->tok[1]);
}

static int parse_fact(struct les_kfacts *f, struct facts_line *l)
{
	const char *key = l->tok[0];

	if (strcmp(key, "release") == 0)
		return l->n == 2 ? name_into(l, f->release, sizeof(f->release), l->tok[1])
				 : bad(l, "'release' takes one word");
	if (strcmp(key, "fentry") == 0)
		return parse_trial(l, &f->fentry, &f->fentry_errno);
	if (strcmp(key, "kprobe_multi") == 0)
		return parse_trial(l, &f->kprobe_multi, &f->kprobe_multi_errno);
	if (strcmp(key, "kprobes") == 0)
		return parse_yes_no(l, &f->kprobes);
	if (strcmp(key, "task_btf") == 0)
		return parse_yes_no(l, &f->task_btf);
	/* Absent from facts recorded before it was asked: no (the BTF flavour). */
	if (strcmp(key, "rdonly_cast") == 0)
		return parse_yes_no(l, &f->rdonly_cast);
	if (strcmp(key, "module") == 0)
		return parse_module(f, l);
	if (strcmp(key, "sym") == 0)
		return parse_sym(f, l);
	if (strcmp(key, "proto") == 0)
		return parse_proto(f, l);
	if (strcmp(key, "fexit") == 0)
		return parse_fexit(f, l);
	if (strcmp(key, "type") == 0)
		return parse_type(f, l);
	if (strcmp(key, "tracepoint") == 0)
		return parse_tracepoint(f, l);
	return bad(l, "unknown fact '%.40s'", key);
}

/* Split at blanks; a '#' starts a comment. */
static int tokenize(struct facts_line *l, char *text)
{
	char *save = NULL, *tok;

	text[strcspn(text, "#\n")] = 0;
	l->n = 0;
	for (tok = strtok_r(text, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (l->n == TOKENS_MAX)
			return bad(l, "too many words");
		l->tok[l->n++] = tok;
	}
	return 0;
}

int les_kfacts_read(struct les_kfacts *f, FILE *in, char *err, size_t err_len)
{
	struct facts_line l = {.err = err, .err_len = err_len};
	bool header = false;
	char text[512];
	int ret = 0;

	memset(f, 0, sizeof(*f));
	f->recorded = true;
	while (!ret && fgets(text, sizeof(text), in)) {
		l.no++;
		if (!strchr(text, '\n') && !feof(in))
			return bad(&l, "line longer than %zu characters", sizeof(text) - 2);
		ret = tokenize(&l, text);
		if (ret || !l.n)
			continue;
		if (!header) {
			if (l.n != 2 || strcmp(l.tok[0], FACTS_MAGIC) || strcmp(l.tok[1], "1"))
				return bad(&l,
					   "not kernel facts of this version (expected "
					   "'%s %d' first)",
					   FACTS_MAGIC, FACTS_VERSION);
			header = true;
			continue;
		}
		ret = parse_fact(f, &l);
	}
	if (!ret && !header) {
		snprintf(err, err_len, "not kernel facts: no '%s %d' line", FACTS_MAGIC,
			 FACTS_VERSION);
		return -EINVAL;
	}
	return ret;
}

int les_kfacts_load(struct les_kfacts *f, const char *path, char *err, size_t err_len)
{
	FILE *in = fopen(path, "re");
	int ret;

	if (!in) {
		ret = -errno;
		snprintf(err, err_len, "%s", strerror(-ret));
		return ret;
	}
	ret = les_kfacts_read(f, in, err, err_len);
	if (!ret && ferror(in))
		ret = -EIO;
	fclose(in);
	return ret;
}
