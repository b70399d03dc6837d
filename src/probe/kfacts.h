/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The running kernel's facts, read once into a value: the text symbols of
 * kallsyms the planners ask about (with their modules, compiler clones
 * such as name.constprop.0 and the kprobe blacklist), which modules are
 * loaded and have BTF, the prototypes vmlinux and module BTF give for
 * functions and VFS methods, BTF types, tracepoints, and what the kernel
 * accepts when asked: an fentry program, kprobes, kprobe_multi links,
 * bpf_get_current_task_btf. The probe planners (fnprobes.c, rpcprobes.c,
 * probes.c) are pure functions of these facts and the options, so facts
 * recorded on another machine (--dump-kernel-facts, read back with
 * --kernel-facts FILE) reproduce its plan here, and unit tests feed them.
 */
#ifndef LES_KFACTS_H
#define LES_KFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LES_KF_NAME_LEN	   64
#define LES_KF_MODULE_LEN  32
#define LES_KF_RELEASE_LEN 65
#define LES_KF_ARGS_MAX	   16
#define LES_KF_SYMS_MAX	   512
#define LES_KF_PROTOS_MAX  256
#define LES_KF_MODULES_MAX 64
#define LES_KF_TYPES_MAX   64
#define LES_KF_TPS_MAX	   32
#define LES_KF_WANT_MAX	   256
/* A parameter of none of the kinds of enum les_fn_arg_kind. */
#define LES_KF_ARG_OTHER 0xff
/* fexit_errno: the function's module has no BTF object to attach through. */
#define LES_KF_NO_BTF_OBJECT (-1)

/* The outcome of a trial the kernel was asked (a program load, a link). */
enum les_kf_trial {
	LES_KF_NOT_TRIED = 0,
	LES_KF_OK,
	LES_KF_NO_BTF,	       /* nothing to load against: no kernel BTF */
	LES_KF_LOAD_REFUSED,   /* the program load failed: errno says why */
	LES_KF_ATTACH_REFUSED, /* loaded, but the link failed: errno says why */
	LES_KF_TRIAL_MAX,
};

/* A text symbol; clones keep their suffix ("x.constprop.0"). */
struct les_kf_sym {
	char name[LES_KF_NAME_LEN];
	char module[LES_KF_MODULE_LEN]; /* "vmlinux" when built in */
	unsigned long long addr;	/* 0 when read from a file */
	bool blacklisted;		/* listed in the kprobe blacklist */
};

/* A prototype as the planners read it: argument kinds and return kind. */
struct les_kf_proto {
	char name[LES_KF_NAME_LEN];  /* a function, or "ops_struct.member" */
	char btf[LES_KF_MODULE_LEN]; /* the BTF it is in: "vmlinux" or a module */
	unsigned int nargs;
	unsigned char arg[LES_KF_ARGS_MAX]; /* enum les_fn_arg_kind or LES_KF_ARG_OTHER */
	unsigned char ret;		    /* enum les_fn_ret_kind: INT, LONG, PTR or VOID */
	/* Functions of more than six arguments: a trial fexit's errno, 0 if it attached. */
	int fexit_errno;
	int btf_id; /* while gathering only */
};

struct les_kf_module {
	char name[LES_KF_MODULE_LEN];
	bool loaded; /* /sys/module/NAME (built in or loaded) */
	bool btf;    /* /sys/kernel/btf/NAME */
};

struct les_kf_type {
	char name[LES_KF_NAME_LEN];
	char btf[LES_KF_MODULE_LEN];
	int kind; /* BTF_KIND_* */
};

struct les_kfacts {
	char release[LES_KF_RELEASE_LEN];
	bool recorded;		  /* read from a file, not from this kernel */
	enum les_kf_trial fentry; /* a do-nothing fentry program on vfs_read */
	int fentry_errno;
	bool kprobes;			/* a kprobe PMU or kprobe_events */
	enum les_kf_trial kprobe_multi; /* a kprobe_multi link on a wanted function */
	int kprobe_multi_errno;
	bool task_btf; /* bpf_get_current_task_btf (5.11) */
	bool rdonly_cast; /* the bpf_rdonly_cast kfunc (6.2) */
	struct les_kf_sym sym[LES_KF_SYMS_MAX];
	size_t n_sym;
	struct les_kf_proto proto[LES_KF_PROTOS_MAX];
	size_t n_proto;
	struct les_kf_module module[LES_KF_MODULES_MAX];
	size_t n_module;
	struct les_kf_type type[LES_KF_TYPES_MAX];
	size_t n_type;
	char tracepoint[LES_KF_TPS_MAX][LES_KF_NAME_LEN]; /* "category:event" */
	size_t n_tracepoint;
};

/* What to ask the kernel about: names the planners' tables hold (copied in). */
struct les_kf_wants {
	char func[LES_KF_WANT_MAX][LES_KF_NAME_LEN]; /* kallsyms, function BTF */
	size_t n_func;
	char member[LES_KF_WANT_MAX][LES_KF_NAME_LEN]; /* "ops_struct.member", vmlinux BTF */
	size_t n_member;
	char module[LES_KF_MODULES_MAX][LES_KF_MODULE_LEN];
	size_t n_module;
	struct {
		char name[LES_KF_NAME_LEN];
		int kind;
	} type[LES_KF_TYPES_MAX]; /* in vmlinux or any module's BTF */
	size_t n_type;
	char tracepoint[LES_KF_TPS_MAX][LES_KF_NAME_LEN]; /* "category:event" */
	size_t n_tracepoint;
};

/* Add to the wants; a name already there is not added twice. */
void les_kf_want_func(struct les_kf_wants *w, const char *name);
void les_kf_want_member(struct les_kf_wants *w, const char *ops_struct, const char *members);
void les_kf_want_module(struct les_kf_wants *w, const char *name);
void les_kf_want_type(struct les_kf_wants *w, const char *name, int kind);
void les_kf_want_tracepoint(struct les_kf_wants *w, const char *name);

/* Read the running kernel, once. f is zeroed first. */
void les_kfacts_gather(struct les_kfacts *f, const struct les_kf_wants *w);

/*
 * Facts written by les_kfacts_write. 0, or -EINVAL with "line N: what"
 * in err (-errno when the file cannot be read).
 */
int les_kfacts_read(struct les_kfacts *f, FILE *in, char *err, size_t err_len);
int les_kfacts_load(struct les_kfacts *f, const char *path, char *err, size_t err_len);
/* --dump-kernel-facts: one fact per line, without symbol addresses. */
void les_kfacts_write(const struct les_kfacts *f, FILE *out);

/* --- questions the planners ask --------------------------------------- */

/* The symbol called exactly name, or NULL. */
const struct les_kf_sym *les_kfacts_sym(const struct les_kfacts *f, const char *name);
/* A compiler clone of name (name.constprop.N, .isra.N, .part.N), or NULL. */
const struct les_kf_sym *les_kfacts_clone(const struct les_kfacts *f, const char *name);
/* The prototype of name in the BTF called btf, or NULL. */
const struct les_kf_proto *les_kfacts_proto(const struct les_kfacts *f, const char *name,
					    const char *btf);
/* "vmlinux" counts as loaded and as having BTF when the kernel has it. */
bool les_kfacts_module_loaded(const struct les_kfacts *f, const char *module);
bool les_kfacts_module_btf(const struct les_kfacts *f, const char *module);
/* A BTF type in the BTF called btf, or in any when btf is NULL. */
bool les_kfacts_has_type(const struct les_kfacts *f, const char *name, int kind, const char *btf);
bool les_kfacts_has_tracepoint(const struct les_kfacts *f, const char *category, const char *event);

/* "EPERM", "ENOTSUPP", ... or the number, for reasons and the dump. */
const char *les_kf_errno_name(int err, char *buf, size_t len);

/* Where tracefs is mounted, or NULL; mount it if it is not (attach needs it). */
const char *les_tracefs_root(void);
int les_ensure_tracefs(void);

#endif /* LES_KFACTS_H */
