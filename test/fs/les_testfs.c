// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * les-testfs: an in-memory FUSE filesystem that behaves like a slow,
 * faulty network filesystem. It is the test double the end-to-end tests
 * and the demo trace: every operation can be delayed (always, or every
 * K-th call), made to fail with a chosen errno (by option, or by naming a
 * file fail-eio..., fail-etimedout..., fail-enotconn...), and counted.
 *
 * One global mutex guards the tree; delays are served outside it so slow
 * requests overlap the way they do against a real server.
 *
 * Usage: les-testfs MOUNTPOINT [--latency-ms=N] [--inject=OP:ERR[:EVERY]]
 *        [FUSE options]; see --help and test/fs/README.md.
 */
#define FUSE_USE_VERSION 31

#include <fuse.h>
#include <fuse_lowlevel.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE */
#include <linux/fuse.h> /* struct fuse_in_header: what --count-requests reads */

#define TESTFS_NAME	   "les-testfs"
#define TESTFS_BLOCK	   4096u
#define TESTFS_CAPACITY	   (8ull << 30) /* what statfs reports as the size */
#define TESTFS_MAX_FILE	   (1ull << 30) /* in-memory files: EFBIG past this */
#define TESTFS_MAX_INODES  (1u << 20)
#define TESTFS_XATTR_NAME  255u
#define TESTFS_XATTR_VALUE 65536u
#define TESTFS_MAX_MS	   600000u /* ten minutes is plenty for any delay */

/* ------------------------------------------------------------------------ */
/* Operation names: what --latency-ops, --inject and the stats file use.    */

enum testfs_op {
	OP_GETATTR = 0,
	OP_READLINK,
	OP_MKNOD,
	OP_MKDIR,
	OP_UNLINK,
	OP_RMDIR,
	OP_SYMLINK,
	OP_RENAME,
	OP_LINK,
	OP_CHMOD,
	OP_CHOWN,
	OP_TRUNCATE,
	OP_OPEN,
	OP_READ,
	OP_WRITE,
	OP_STATFS,
	OP_FLUSH,
	OP_RELEASE,
	OP_FSYNC,
	OP_SETXATTR,
	OP_GETXATTR,
	OP_LISTXATTR,
	OP_REMOVEXATTR,
	OP_OPENDIR,
	OP_READDIR,
	OP_RELEASEDIR,
	OP_FSYNCDIR,
	OP_ACCESS,
	OP_CREATE,
	OP_UTIMENS,
	OP_MAX,
};

static const char *const op_names[OP_MAX] = {
	[OP_GETATTR] = "getattr",	  [OP_READLINK] = "readlink",
	[OP_MKNOD] = "mknod",		  [OP_MKDIR] = "mkdir",
	[OP_UNLINK] = "unlink",		  [OP_RMDIR] = "rmdir",
	[OP_SYMLINK] = "symlink",	  [OP_RENAME] = "rename",
	[OP_LINK] = "link",		  [OP_CHMOD] = "chmod",
	[OP_CHOWN] = "chown",		  [OP_TRUNCATE] = "truncate",
	[OP_OPEN] = "open",		  [OP_READ] = "read",
	[OP_WRITE] = "write",		  [OP_STATFS] = "statfs",
	[OP_FLUSH] = "flush",		  [OP_RELEASE] = "release",
	[OP_FSYNC] = "fsync",		  [OP_SETXATTR] = "setxattr",
	[OP_GETXATTR] = "getxattr",	  [OP_LISTXATTR] = "listxattr",
	[OP_REMOVEXATTR] = "removexattr", [OP_OPENDIR] = "opendir",
	[OP_READDIR] = "readdir",	  [OP_RELEASEDIR] = "releasedir",
	[OP_FSYNCDIR] = "fsyncdir",	  [OP_ACCESS] = "access",
	[OP_CREATE] = "create",		  [OP_UTIMENS] = "utimens",
};

static int op_from_name(const char *name, size_t len)
{
	/* The high-level API answers a kernel LOOKUP with getattr. */
	if (len == 6 && !strncmp(name, "lookup", len))
		return OP_GETATTR;
	for (int op = 0; op < OP_MAX; op++)
		if (strlen(op_names[op]) == len && !strncmp(op_names[op], name, len))
			return op;
	return -1;
}

static const struct {
	const char *name;
	int err;
} errno_names[] = {
	{ "EIO", EIO },		{ "ETIMEDOUT", ETIMEDOUT }, { "ENOTCONN", ENOTCONN },
	{ "EACCES", EACCES },	{ "ENOENT", ENOENT },	    { "EAGAIN", EAGAIN },
	{ "ENOSPC", ENOSPC },	{ "EPERM", EPERM },	    { "ESTALE", ESTALE },
	{ "EROFS", EROFS },	{ "EDQUOT", EDQUOT },	    { "EINTR", EINTR },
	{ "ENOMEM", ENOMEM },	{ "EBUSY", EBUSY },	    { "ECONNRESET", ECONNRESET },
	{ "EHOSTDOWN", EHOSTDOWN },
};

static int errno_from_name(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strlen(errno_names[i].name) == len &&
		    !strncasecmp(errno_names[i].name, name, len))
			return errno_names[i].err;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */

struct settings {
	unsigned int latency_ms;
	bool latency_some; /* --latency-ops given: only latency_op[] ones wait */
	bool latency_op[OP_MAX];
	unsigned int slow_every;
	unsigned int slow_ms;
	int inject_err[OP_MAX]; /* positive errno, 0: no injection */
	unsigned int inject_every[OP_MAX];
	bool direct_io;
	bool no_auto_unmount;
	bool count_requests; /* own session loop: count each request's opcode */
	char *fsname;
	char *stats_file; /* absolute: the daemon runs with cwd "/" */
	mode_t root_mode;
	bool show_help;
};

static struct settings cfg = {
	.root_mode = 0755,
};

/* ------------------------------------------------------------------------ */
/* Per-op accounting, latency and injected faults                           */

static uint64_t op_calls[OP_MAX];
/* --count-requests: requests read from /dev/fuse, by opcode (last: 64 and above). */
#define TESTFS_OPCODES 65
static uint64_t opcode_calls[TESTFS_OPCODES];
static uint64_t slow_seen; /* latency-eligible operations so far */

static void sleep_ms(unsigned int ms)
{
	struct timespec left = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&left, &left) && errno == EINTR)
		;
}

static unsigned int op_delay_ms(enum testfs_op op)
{
	unsigned int ms = cfg.latency_ms;

	if (cfg.latency_some && !cfg.latency_op[op])
		return 0;
	if (cfg.slow_every) {
		uint64_t n = __atomic_add_fetch(&slow_seen, 1, __ATOMIC_RELAXED);

		if (n % cfg.slow_every == 0)
			ms += cfg.slow_ms;
	}
	return ms;
}

/*
 * Called first by every operation, before the tree lock is taken: counts
 * the call, waits as configured, then returns the injected error (negative)
 * or 0. Waiting before failing mimics a server that times out.
 */
static int op_enter(enum testfs_op op)
{
	uint64_t n = __atomic_add_fetch(&op_calls[op], 1, __ATOMIC_RELAXED);
	unsigned int ms = op_delay_ms(op);

	if (ms)
		sleep_ms(ms);
	if (cfg.inject_err[op] && n % cfg.inject_every[op] == 0)
		return -cfg.inject_err[op];
	return 0;
}

/* Path-based faults: a file named fail-eio* etc. fails open/read/write. */
static int path_fault(const char *path)
{
	static const struct {
		const char *prefix;
		int err;
	} faults[] = {
		{ "fail-eio", EIO },
		{ "fail-etimedout", ETIMEDOUT },
		{ "fail-enotconn", ENOTCONN },
	};
	const char *name = path ? strrchr(path, '/') : NULL;

	if (!name)
		return 0;
	name++;
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (!strncmp(name, faults[i].prefix, strlen(faults[i].prefix)))
			return faults[i].err;
	return 0;
}

static int stats_write(void)
{
	char tmp[PATH_MAX];
	FILE *f;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", cfg.stats_file) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	for (int op = 0; op < OP_MAX; op++)
		fprintf(f, "%s %llu\n", op_names[op],
			(unsigned long long)__atomic_load_n(&op_calls[op], __ATOMIC_RELAXED));
	for (int opc = 0; cfg.count_requests && opc < TESTFS_OPCODES; opc++) {
		uint64_t n = __atomic_load_n(&opcode_calls[opc], __ATOMIC_RELAXED);

		if (n)
			fprintf(f, "opcode_%d %llu\n", opc, (unsigned long long)n);
	}
	if (fclose(f))
		err = -errno;
	/* Readers see either the previous file or the complete new one. */
	if (!err && rename(tmp, cfg.stats_file))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/*
 * SIGUSR1 is blocked in every thread (main blocks it before fuse_main, the
 * workers inherit the mask); this thread takes it with sigwait, so the
 * stats file is written in ordinary thread context, not in a handler.
 */
static pthread_t stats_thread;
static bool stats_thread_running;
static int stats_stop;

static void *stats_main(void *unused)
{
	sigset_t set;
	int sig;

	(void)unused;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (__atomic_load_n(&stats_stop, __ATOMIC_ACQUIRE))
			break;
		if (stats_write())
			fprintf(stderr, TESTFS_NAME ": cannot write %s\n", cfg.stats_file);
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The tree                                                                 */

struct xattr {
	struct xattr *next;
	char *name;
	void *value;
	size_t size;
};

struct dent {
	char *name;
	struct node *node;
};

struct node {
	ino_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	nlink_t nlink;
	dev_t rdev;
	struct timespec atime, mtime, ctime;
	unsigned int opens; /* open handles keep an unlinked node alive */
	struct xattr *xattrs;
	char *data; /* regular file contents, size bytes valid of cap */
	size_t size;
	size_t cap;
	char *target; /* symlink */
	struct node *parent; /* directories only: they have one name */
	struct dent *ents;
	size_t nents;
	size_t ents_cap;
};

/* What an open file or directory carries in fi->fh. */
struct handle {
	struct node *node;
	int fault; /* errno read/write return, from the name at open */
};

static struct {
	pthread_mutex_t lock;
	struct node *root;
	ino_t next_ino;
	uint64_t bytes; /* sum of regular file sizes */
	uint64_t inodes;
} fs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_ino = 1,
};

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static void touch_mc(struct node *n)
{
	now(&n->mtime);
	n->ctime = n->mtime;
}

/*
 * A new node owned by the caller of the current request; owner is NULL for
 * the root, made before there is a request (and a valid fuse_get_context).
 */
static struct node *node_new(mode_t mode, struct node *parent, const struct fuse_context *owner)
{
	struct node *n;

	if (fs.inodes >= TESTFS_MAX_INODES)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->ino = fs.next_ino++;
	n->mode = mode;
	n->uid = owner ? owner->uid : getuid();
	n->gid = owner ? owner->gid : getgid();
	/* BSD group semantics under a set-group-ID directory, as ext4 does. */
	if (parent && (parent->mode & S_ISGID)) {
		n->gid = parent->gid;
		if (S_ISDIR(mode))
			n->mode |= S_ISGID;
	}
	n->nlink = S_ISDIR(mode) ? 2 : 1;
	now(&n->atime);
	n->mtime = n->ctime = n->atime;
	fs.inodes++;
	return n;
}

static void node_free(struct node *n)
{
	struct xattr *x, *next;

	for (x = n->xattrs; x; x = next) {
		next = x->next;
		free(x->name);
		free(x->value);
		free(x);
	}
	for (size_t i = 0; i < n->nents; i++)
		free(n->ents[i].name);
	if (S_ISREG(n->mode))
		fs.bytes -= n->size;
	free(n->ents);
	free(n->data);
	free(n->target);
	free(n);
	fs.inodes--;
}

/* Frees a node once it has neither names nor open handles. */
static void node_put(struct node *n)
{
	if (n->nlink == 0 && n->opens == 0)
		node_free(n);
}

/* Tears down a whole subtree at unmount; every node has one name here. */
static void tree_free(struct node *n)
{
	for (size_t i = 0; i < n->nents; i++) {
		struct node *child = n->ents[i].node;

		if (S_ISDIR(child->mode))
			tree_free(child);
		else if (--child->nlink == 0)
			node_free(child);
	}
	node_free(n);
}

static long dir_find(struct node *dir, const char *name, size_t len)
{
	for (size_t i = 0; i < dir->nents; i++)
		if (!strncmp(dir->ents[i].name, name, len) && dir->ents[i].name[len] == '\0')
			return (long)i;
	return -1;
}

static int dir_add(struct node *dir, const char *name, size_t len, struct node *n)
{
	if (dir->nents == dir->ents_cap) {
		size_t cap = dir->ents_cap ? dir->ents_cap * 2 : 8;
		struct dent *ents = realloc(dir->ents, cap * sizeof(*ents));

		if (!ents)
			return -ENOMEM;
		dir->ents = ents;
		dir->ents_cap = cap;
	}
	dir->ents[dir->nents].name = strndup(name, len);
	if (!dir->ents[dir->nents].name)
		return -ENOMEM;
	dir->ents[dir->nents].node = n;
	dir->nents++;
	if (S_ISDIR(n->mode)) {
		n->parent = dir;
		dir->nlink++;
	}
	touch_mc(dir);
	return 0;
}

/* Drops entry i; the caller fixes the removed node's own link count. */
static void dir_remove_at(struct node *dir, size_t i)
{
	if (S_ISDIR(dir->ents[i].node->mode))
		dir->nlink--;
	free(dir->ents[i].name);
	dir->ents[i] = dir->ents[--dir->nents];
	touch_mc(dir);
}

/* Resolves the first len bytes of path. Caller holds fs.lock. */
static int resolve_len(const char *path, size_t len, struct node **out)
{
	struct node *cur = fs.root;
	const char *p = path, *end = path + len;

	while (p < end) {
		const char *comp;
		size_t clen;
		long i;

		while (p < end && *p == '/')
			p++;
		if (p == end)
			break;
		comp = p;
		while (p < end && *p != '/')
			p++;
		clen = (size_t)(p - comp);
		if (clen > NAME_MAX)
			return -ENAMETOOLONG;
		if (!S_ISDIR(cur->mode))
			return -ENOTDIR;
		i = dir_find(cur, comp, clen);
		if (i < 0)
			return -ENOENT;
		cur = cur->ents[i].node;
	}
	*out = cur;
	return 0;
}

/* Without hard_remove's hidden renames, an unlinked node has no path: NULL. */
static int resolve(const char *path, struct node **out)
{
	if (!path)
		return -ENOENT;
	return resolve_len(path, strlen(path), out);
}

/* Splits path into its directory node and final name. Caller holds fs.lock. */
static int resolve_parent(const char *path, struct node **dir, const char **name, size_t *len)
{
	const char *slash = strrchr(path, '/');
	int err;

	if (!slash)
		return -EINVAL;
	*name = slash + 1;
	*len = strlen(*name);
	if (*len == 0)
		return -EINVAL; /* the root has no parent to change */
	if (*len > NAME_MAX)
		return -ENAMETOOLONG;
	err = resolve_len(path, (size_t)(slash - path), dir);
	if (err)
		return err;
	return S_ISDIR((*dir)->mode) ? 0 : -ENOTDIR;
}

/* The node an fh-or-path operation acts on. Caller holds fs.lock. */
static int node_of(const char *path, struct fuse_file_info *fi, struct node **out)
{
	if (fi && fi->fh) {
		*out = ((struct handle *)(uintptr_t)fi->fh)->node;
		return 0;
	}
	return resolve(path, out);
}

/* Creates a new name under path's parent; the common part of mknod & co. */
static int make_node(const char *path, mode_t mode, struct node **out)
{
	struct node *dir, *n;
	const char *name;
	size_t len;
	int err;

	err = resolve_parent(path, &dir, &name, &len);
	if (err)
		return err;
	if (dir_find(dir, name, len) >= 0)
		return -EEXIST;
	n = node_new(mode, dir, fuse_get_context());
	if (!n)
		return -ENOSPC;
	err = dir_add(dir, name, len, n);
	if (err) {
		node_free(n);
		return err;
	}
	*out = n;
	return 0;
}

static int file_resize(struct node *n, uint64_t size)
{
	if (size > TESTFS_MAX_FILE)
		return -EFBIG;
	if (size > n->cap) {
		size_t cap = n->cap ? n->cap : TESTFS_BLOCK;
		char *data;

		while (cap < size)
			cap *= 2;
		if (cap > TESTFS_MAX_FILE)
			cap = TESTFS_MAX_FILE;
		data = realloc(n->data, cap);
		if (!data)
			return -ENOSPC;
		n->data = data;
		n->cap = cap;
	}
	/* Bytes past the old end may hold data from before a shrink: holes read as zeros. */
	if (size > n->size)
		memset(n->data + n->size, 0, size - n->size);
	fs.bytes = fs.bytes - n->size + size;
	n->size = size;
	return 0;
}

static void fill_stat(const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_nlink = n->nlink;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_rdev = n->rdev;
	st->st_blksize = TESTFS_BLOCK;
	if (S_ISREG(n->mode))
		st->st_size = (off_t)n->size;
	else if (S_ISLNK(n->mode))
		st->st_size = (off_t)strlen(n->target);
	else if (S_ISDIR(n->mode))
		st->st_size = TESTFS_BLOCK;
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
}

static struct handle *handle_new(struct node *n, int fault)
{
	struct handle *h = malloc(sizeof(*h));

	if (!h)
		return NULL;
	h->node = n;
	h->fault = fault;
	n->opens++;
	return h;
}

static void handle_free(struct handle *h)
{
	h->node->opens--;
	node_put(h->node);
	free(h);
}

/* ------------------------------------------------------------------------ */
/* FUSE operations. Each starts with op_enter, then works under fs.lock.    */

static int tfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct node *n;
	int err = op_enter(OP_GETATTR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = node_of(path, fi, &n);
	if (!err)
		fill_stat(n, st);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_readlink(const char *path, char *buf, size_t size)
{
	struct node *n;
	int err = op_enter(OP_READLINK);

	if (err)
		return err;
	if (size == 0)
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (!err && !S_ISLNK(n->mode))
		err = -EINVAL;
	if (!err) {
		/* The high-level API wants a NUL-terminated, possibly truncated target. */
		strncpy(buf, n->target, size - 1);
		buf[size - 1] = '\0';
		now(&n->atime);
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_mknod(const char *path, mode_t mode, dev_t rdev)
{
	struct node *n;
	int err = op_enter(OP_MKNOD);

	if (err)
		return err;
	if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode) && !S_ISCHR(mode) &&
	    !S_ISBLK(mode))
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	err = make_node(path, mode, &n);
	if (!err)
		n->rdev = rdev;
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_mkdir(const char *path, mode_t mode)
{
	struct node *n;
	int err = op_enter(OP_MKDIR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = make_node(path, S_IFDIR | (mode & 07777), &n);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_unlink(const char *path)
{
	struct node *dir, *n;
	const char *name;
	size_t len;
	long i;
	int err = op_enter(OP_UNLINK);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve_parent(path, &dir, &name, &len);
	if (err)
		goto out;
	i = dir_find(dir, name, len);
	if (i < 0) {
		err = -ENOENT;
		goto out;
	}
	n = dir->ents[i].node;
	if (S_ISDIR(n->mode)) {
		err = -EISDIR;
		goto out;
	}
	dir_remove_at(dir, (size_t)i);
	n->nlink--;
	now(&n->ctime);
	node_put(n);
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_rmdir(const char *path)
{
	struct node *dir, *n;
	const char *name;
	size_t len;
	long i;
	int err = op_enter(OP_RMDIR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve_parent(path, &dir, &name, &len);
	if (err == -EINVAL)
		err = -EBUSY; /* rmdir of the root */
	if (err)
		goto out;
	i = dir_find(dir, name, len);
	if (i < 0) {
		err = -ENOENT;
		goto out;
	}
	n = dir->ents[i].node;
	if (!S_ISDIR(n->mode)) {
		err = -ENOTDIR;
		goto out;
	}
	if (n->nents) {
		err = -ENOTEMPTY;
		goto out;
	}
	dir_remove_at(dir, (size_t)i);
	n->nlink = 0;
	n->parent = NULL;
	node_put(n);
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_symlink(const char *target, const char *path)
{
	struct node *n;
	int err = op_enter(OP_SYMLINK);

	if (err)
		return err;
	if (strlen(target) >= PATH_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&fs.lock);
	err = make_node(path, S_IFLNK | 0777, &n);
	if (!err) {
		n->target = strdup(target);
		if (!n->target)
			n->target = strdup(""); /* keep the invariant; tiny, so it succeeds */
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

/* Is dir inside the subtree rooted at top? Directories know their parent. */
static bool is_within(const struct node *top, const struct node *dir)
{
	for (; dir; dir = dir->parent)
		if (dir == top)
			return true;
	return false;
}

static int rename_exchange(struct node *sdir, long si, struct node *ddir, long di)
{
	struct node *src = sdir->ents[si].node, *dst = ddir->ents[di].node;

	if (src == dst)
		return 0;
	if ((S_ISDIR(src->mode) && is_within(src, ddir)) ||
	    (S_ISDIR(dst->mode) && is_within(dst, sdir)))
		return -EINVAL;
	sdir->ents[si].node = dst;
	ddir->ents[di].node = src;
	if (sdir != ddir) {
		/* A directory carries its ".." link to its new parent. */
		if (S_ISDIR(src->mode)) {
			src->parent = ddir;
			sdir->nlink--;
			ddir->nlink++;
		}
		if (S_ISDIR(dst->mode)) {
			dst->parent = sdir;
			ddir->nlink--;
			sdir->nlink++;
		}
	}
	touch_mc(sdir);
	touch_mc(ddir);
	now(&src->ctime);
	now(&dst->ctime);
	return 0;
}

/* Checks whether src may replace dst, the rules of rename(2). */
static int rename_replace_check(const struct node *src, const struct node *dst)
{
	if (S_ISDIR(src->mode)) {
		if (!S_ISDIR(dst->mode))
			return -ENOTDIR;
		if (dst->nents)
			return -ENOTEMPTY;
	} else if (S_ISDIR(dst->mode)) {
		return -EISDIR;
	}
	return 0;
}

static int rename_locked(const char *from, const char *to, unsigned int flags)
{
	struct node *sdir, *ddir, *src, *dst = NULL;
	const char *sname, *dname;
	size_t slen, dlen;
	long si, di;
	int err;

	err = resolve_parent(from, &sdir, &sname, &slen);
	if (!err)
		err = resolve_parent(to, &ddir, &dname, &dlen);
	if (err)
		return err;
	si = dir_find(sdir, sname, slen);
	if (si < 0)
		return -ENOENT;
	src = sdir->ents[si].node;
	di = dir_find(ddir, dname, dlen);
	if (flags & RENAME_EXCHANGE)
		return di < 0 ? -ENOENT : rename_exchange(sdir, si, ddir, di);
	if (di >= 0) {
		dst = ddir->ents[di].node;
		if (flags & RENAME_NOREPLACE)
			return -EEXIST;
		if (dst == src)
			return 0; /* two names of one inode: rename(2) does nothing */
		err = rename_replace_check(src, dst);
		if (err)
			return err;
	}
	if (S_ISDIR(src->mode) && is_within(src, ddir))
		return -EINVAL;

	if (dst) {
		/* Reuse the destination slot: nothing to allocate, nothing to fail. */
		if (S_ISDIR(dst->mode)) {
			ddir->nlink--;
			dst->nlink = 0;
			dst->parent = NULL;
		} else {
			dst->nlink--;
		}
		now(&dst->ctime);
		ddir->ents[di].node = src;
		if (S_ISDIR(src->mode)) {
			src->parent = ddir;
			ddir->nlink++;
		}
		touch_mc(ddir);
	} else {
		err = dir_add(ddir, dname, dlen, src);
		if (err)
			return err;
	}
	/* dir_add appends and a replaced slot differs from si: si still names src. */
	dir_remove_at(sdir, (size_t)si);
	now(&src->ctime);
	if (dst)
		node_put(dst);
	return 0;
}

static int tfs_rename(const char *from, const char *to, unsigned int flags)
{
	int err = op_enter(OP_RENAME);

	if (err)
		return err;
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL; /* RENAME_WHITEOUT is for overlay upper layers */
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	err = rename_locked(from, to, flags);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_link(const char *from, const char *to)
{
	struct node *src, *dir;
	const char *name;
	size_t len;
	int err = op_enter(OP_LINK);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(from, &src);
	if (!err && S_ISDIR(src->mode))
		err = -EPERM;
	if (!err)
		err = resolve_parent(to, &dir, &name, &len);
	if (!err && dir_find(dir, name, len) >= 0)
		err = -EEXIST;
	if (!err)
		err = dir_add(dir, name, len, src);
	if (!err) {
		src->nlink++;
		now(&src->ctime);
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct node *n;
	int err = op_enter(OP_CHMOD);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = node_of(path, fi, &n);
	if (!err) {
		n->mode = (n->mode & S_IFMT) | (mode & 07777);
		now(&n->ctime);
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct node *n;
	int err = op_enter(OP_CHOWN);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = node_of(path, fi, &n);
	if (!err) {
		if (uid != (uid_t)-1)
			n->uid = uid;
		if (gid != (gid_t)-1)
			n->gid = gid;
		now(&n->ctime);
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct node *n;
	int err = op_enter(OP_TRUNCATE);

	if (err)
		return err;
	if (size < 0)
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	err = node_of(path, fi, &n);
	if (!err && S_ISDIR(n->mode))
		err = -EISDIR;
	else if (!err && !S_ISREG(n->mode))
		err = -EINVAL;
	if (!err)
		err = file_resize(n, (uint64_t)size);
	if (!err)
		touch_mc(n);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static void open_flags_apply(struct fuse_file_info *fi)
{
	fi->direct_io = cfg.direct_io;
}

static int tfs_open(const char *path, struct fuse_file_info *fi)
{
	struct handle *h;
	struct node *n;
	int err = op_enter(OP_OPEN);

	if (err)
		return err;
	err = -path_fault(path);
	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (!err && S_ISDIR(n->mode))
		err = -EISDIR;
	/* Covers kernels and libfuse builds without atomic O_TRUNC, too. */
	if (!err && (fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY && n->size) {
		err = file_resize(n, 0);
		touch_mc(n);
	}
	if (!err) {
		h = handle_new(n, 0);
		if (h)
			fi->fh = (uintptr_t)h;
		else
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&fs.lock);
	if (!err)
		open_flags_apply(fi);
	return err;
}

static int tfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct handle *h;
	struct node *n;
	int err = op_enter(OP_CREATE);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = make_node(path, S_IFREG | (mode & 07777), &n);
	/* Lost a race with another creator: plain O_CREAT opens what is there. */
	if (err == -EEXIST && !(fi->flags & O_EXCL))
		err = resolve(path, &n);
	if (!err && !S_ISREG(n->mode))
		err = S_ISDIR(n->mode) ? -EISDIR : -EEXIST;
	if (!err) {
		/* Creation succeeds; I/O through the new handle fails as the name says. */
		h = handle_new(n, path_fault(path));
		if (h)
			fi->fh = (uintptr_t)h;
		else
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&fs.lock);
	if (!err)
		open_flags_apply(fi);
	return err;
}

static int tfs_read(const char *path, char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct node *n = h->node;
	size_t count = 0;
	int err = op_enter(OP_READ);

	(void)path;
	if (err)
		return err;
	if (h->fault)
		return -h->fault;
	if (off < 0)
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	if ((uint64_t)off < n->size) {
		count = n->size - (size_t)off;
		if (count > size)
			count = size;
		memcpy(buf, n->data + off, count);
	}
	now(&n->atime);
	pthread_mutex_unlock(&fs.lock);
	return (int)count;
}

static int tfs_write(const char *path, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct node *n = h->node;
	uint64_t end;
	int err = op_enter(OP_WRITE);

	(void)path;
	if (err)
		return err;
	if (h->fault)
		return -h->fault;
	if (off < 0)
		return -EINVAL;
	pthread_mutex_lock(&fs.lock);
	if (fi->flags & O_APPEND)
		off = (off_t)n->size;
	end = (uint64_t)off + size;
	if (end > n->size)
		err = file_resize(n, end);
	if (!err) {
		memcpy(n->data + off, buf, size);
		touch_mc(n);
	}
	pthread_mutex_unlock(&fs.lock);
	return err ? err : (int)size;
}

static int tfs_statfs(const char *path, struct statvfs *sv)
{
	const uint64_t blocks = TESTFS_CAPACITY / TESTFS_BLOCK;
	uint64_t used;
	int err = op_enter(OP_STATFS);

	(void)path;
	if (err)
		return err;
	memset(sv, 0, sizeof(*sv));
	pthread_mutex_lock(&fs.lock);
	used = (fs.bytes + TESTFS_BLOCK - 1) / TESTFS_BLOCK;
	sv->f_files = TESTFS_MAX_INODES;
	sv->f_ffree = TESTFS_MAX_INODES - fs.inodes;
	pthread_mutex_unlock(&fs.lock);
	if (used > blocks)
		used = blocks;
	sv->f_bsize = TESTFS_BLOCK;
	sv->f_frsize = TESTFS_BLOCK;
	sv->f_blocks = blocks;
	sv->f_bfree = blocks - used;
	sv->f_bavail = blocks - used;
	sv->f_favail = sv->f_ffree;
	sv->f_namemax = NAME_MAX;
	return 0;
}

static int tfs_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return op_enter(OP_FLUSH);
}

static int tfs_release(const char *path, struct fuse_file_info *fi)
{
	/* The kernel ignores release errors; the handle goes regardless. */
	int err = op_enter(OP_RELEASE);

	(void)path;
	pthread_mutex_lock(&fs.lock);
	handle_free((struct handle *)(uintptr_t)fi->fh);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return op_enter(OP_FSYNC);
}

static struct xattr *xattr_find(struct node *n, const char *name)
{
	struct xattr *x;

	for (x = n->xattrs; x; x = x->next)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

static int xattr_set_locked(struct node *n, const char *name, const char *value, size_t size,
			    int flags)
{
	struct xattr *x = xattr_find(n, name);
	void *copy;

	if (x && (flags & XATTR_CREATE))
		return -EEXIST;
	if (!x && (flags & XATTR_REPLACE))
		return -ENODATA;
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOSPC;
	memcpy(copy, value, size);
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (x)
			x->name = strdup(name);
		if (!x || !x->name) {
			free(x);
			free(copy);
			return -ENOSPC;
		}
		x->next = n->xattrs;
		n->xattrs = x;
	}
	free(x->value);
	x->value = copy;
	x->size = size;
	now(&n->ctime);
	return 0;
}

static int tfs_setxattr(const char *path, const char *name, const char *value, size_t size,
			int flags)
{
	struct node *n;
	int err = op_enter(OP_SETXATTR);

	if (err)
		return err;
	if (strlen(name) > TESTFS_XATTR_NAME || name[0] == '\0')
		return -ERANGE;
	if (size > TESTFS_XATTR_VALUE)
		return -E2BIG;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (!err)
		err = xattr_set_locked(n, name, value, size, flags);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_getxattr(const char *path, const char *name, char *value, size_t size)
{
	struct xattr *x;
	struct node *n;
	int err = op_enter(OP_GETXATTR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (err)
		goto out;
	x = xattr_find(n, name);
	if (!x) {
		err = -ENODATA;
	} else if (size == 0) {
		err = (int)x->size; /* a size query */
	} else if (size < x->size) {
		err = -ERANGE;
	} else {
		memcpy(value, x->value, x->size);
		err = (int)x->size;
	}
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_listxattr(const char *path, char *list, size_t size)
{
	struct xattr *x;
	struct node *n;
	size_t need = 0;
	int err = op_enter(OP_LISTXATTR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (err)
		goto out;
	for (x = n->xattrs; x; x = x->next)
		need += strlen(x->name) + 1;
	if (size && size < need) {
		err = -ERANGE;
		goto out;
	}
	if (size) {
		char *p = list;

		for (x = n->xattrs; x; x = x->next) {
			size_t len = strlen(x->name) + 1;

			memcpy(p, x->name, len);
			p += len;
		}
	}
	err = (int)need;
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_removexattr(const char *path, const char *name)
{
	struct xattr **link, *x;
	struct node *n;
	int err = op_enter(OP_REMOVEXATTR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (err)
		goto out;
	for (link = &n->xattrs; *link; link = &(*link)->next)
		if (!strcmp((*link)->name, name))
			break;
	x = *link;
	if (!x) {
		err = -ENODATA;
		goto out;
	}
	*link = x->next;
	free(x->name);
	free(x->value);
	free(x);
	now(&n->ctime);
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct handle *h;
	struct node *n;
	int err = op_enter(OP_OPENDIR);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (!err && !S_ISDIR(n->mode))
		err = -ENOTDIR;
	if (!err) {
		h = handle_new(n, 0);
		if (h)
			fi->fh = (uintptr_t)h;
		else
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct node *dir = ((struct handle *)(uintptr_t)fi->fh)->node;
	struct stat st = { 0 };
	int err = op_enter(OP_READDIR);

	(void)path;
	(void)off;
	(void)flags;
	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	/* Offset 0 everywhere: libfuse buffers the whole listing for us. */
	st.st_ino = dir->ino;
	st.st_mode = S_IFDIR;
	filler(buf, ".", &st, 0, 0);
	st.st_ino = dir->parent ? dir->parent->ino : dir->ino;
	filler(buf, "..", &st, 0, 0);
	for (size_t i = 0; i < dir->nents; i++) {
		st.st_ino = dir->ents[i].node->ino;
		st.st_mode = dir->ents[i].node->mode & S_IFMT;
		if (filler(buf, dir->ents[i].name, &st, 0, 0))
			break;
	}
	now(&dir->atime);
	pthread_mutex_unlock(&fs.lock);
	return 0;
}

static int tfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	int err = op_enter(OP_RELEASEDIR);

	(void)path;
	pthread_mutex_lock(&fs.lock);
	handle_free((struct handle *)(uintptr_t)fi->fh);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return op_enter(OP_FSYNCDIR);
}

/* Only reached without default_permissions; then the mode bits decide. */
static int tfs_access(const char *path, int mask)
{
	struct fuse_context *ctx = fuse_get_context();
	struct node *n;
	mode_t bits;
	int err = op_enter(OP_ACCESS);

	if (err)
		return err;
	pthread_mutex_lock(&fs.lock);
	err = resolve(path, &n);
	if (err || mask == F_OK)
		goto out;
	if (ctx->uid == 0) {
		/* root may execute only what someone may execute */
		if ((mask & X_OK) && !S_ISDIR(n->mode) && !(n->mode & 0111))
			err = -EACCES;
		goto out;
	}
	if (ctx->uid == n->uid)
		bits = (n->mode >> 6) & 7;
	else if (ctx->gid == n->gid)
		bits = (n->mode >> 3) & 7;
	else
		bits = n->mode & 7;
	if ((mask & bits) != (mode_t)mask)
		err = -EACCES;
out:
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int tfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct timespec t;
	struct node *n;
	int err = op_enter(OP_UTIMENS);

	if (err)
		return err;
	now(&t);
	pthread_mutex_lock(&fs.lock);
	err = node_of(path, fi, &n);
	if (!err) {
		if (!tv || tv[0].tv_nsec == UTIME_NOW)
			n->atime = t;
		else if (tv[0].tv_nsec != UTIME_OMIT)
			n->atime = tv[0];
		if (!tv || tv[1].tv_nsec == UTIME_NOW)
			n->mtime = t;
		else if (tv[1].tv_nsec != UTIME_OMIT)
			n->mtime = tv[1];
		n->ctime = t;
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

/*
 * libfuse ends the session on SIGTERM/SIGINT/SIGHUP but then makes fuse_main
 * return 8, as for a broken session. A stop we were asked for is a clean
 * exit: note the signal, then hand over to libfuse's own handler.
 */
static volatile sig_atomic_t stop_signal;
static struct sigaction fuse_stop_action[NSIG];

static void on_stop_signal(int sig)
{
	stop_signal = sig;
	if (fuse_stop_action[sig].sa_handler != SIG_DFL &&
	    fuse_stop_action[sig].sa_handler != SIG_IGN)
		fuse_stop_action[sig].sa_handler(sig);
}

static void chain_stop_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &fuse_stop_action[sigs[i]]);
}

static void *tfs_init(struct fuse_conn_info *conn, struct fuse_config *fcfg)
{
	/* Spliced requests stay in a pipe: their header could not be counted. */
	if (cfg.count_requests)
		conn->want &= ~FUSE_CAP_SPLICE_READ;
	/* Handles carry the node: unlinked-but-open files keep working. */
	fcfg->use_ino = 1;
	fcfg->nullpath_ok = 1;
	fcfg->hard_remove = 1;
	/* fuse_main installed its handlers before the session loop that runs us. */
	chain_stop_signals();
	/* Runs in the daemon, after fuse_main has forked: the thread survives. */
	if (cfg.stats_file && !pthread_create(&stats_thread, NULL, stats_main, NULL))
		stats_thread_running = true;
	return NULL;
}

static void tfs_destroy(void *private_data)
{
	(void)private_data;
	if (stats_thread_running) {
		__atomic_store_n(&stats_stop, 1, __ATOMIC_RELEASE);
		pthread_kill(stats_thread, SIGUSR1);
		pthread_join(stats_thread, NULL);
		stats_thread_running = false;
	}
	if (cfg.stats_file && stats_write())
		fprintf(stderr, TESTFS_NAME ": cannot write %s\n", cfg.stats_file);
	pthread_mutex_lock(&fs.lock);
	tree_free(fs.root);
	fs.root = NULL;
	pthread_mutex_unlock(&fs.lock);
}

static const struct fuse_operations tfs_ops = {
	.getattr = tfs_getattr,
	.readlink = tfs_readlink,
	.mknod = tfs_mknod,
	.mkdir = tfs_mkdir,
	.unlink = tfs_unlink,
	.rmdir = tfs_rmdir,
	.symlink = tfs_symlink,
	.rename = tfs_rename,
	.link = tfs_link,
	.chmod = tfs_chmod,
	.chown = tfs_chown,
	.truncate = tfs_truncate,
	.open = tfs_open,
	.read = tfs_read,
	.write = tfs_write,
	.statfs = tfs_statfs,
	.flush = tfs_flush,
	.release = tfs_release,
	.fsync = tfs_fsync,
	.setxattr = tfs_setxattr,
	.getxattr = tfs_getxattr,
	.listxattr = tfs_listxattr,
	.removexattr = tfs_removexattr,
	.opendir = tfs_opendir,
	.readdir = tfs_readdir,
	.releasedir = tfs_releasedir,
	.fsyncdir = tfs_fsyncdir,
	.init = tfs_init,
	.destroy = tfs_destroy,
	.access = tfs_access,
	.create = tfs_create,
	.utimens = tfs_utimens,
};

/* ------------------------------------------------------------------------ */
/* Command line                                                             */

enum {
	KEY_LATENCY_MS,
	KEY_LATENCY_OPS,
	KEY_SLOW_EVERY,
	KEY_SLOW_MS,
	KEY_INJECT,
	KEY_DIRECT_IO,
	KEY_FSNAME,
	KEY_STATS_FILE,
	KEY_ROOT_MODE,
	KEY_NO_AUTO_UNMOUNT,
	KEY_COUNT_REQUESTS,
	KEY_HELP,
};

static const struct fuse_opt testfs_opts[] = {
	FUSE_OPT_KEY("--latency-ms=", KEY_LATENCY_MS),
	FUSE_OPT_KEY("--latency-ops=", KEY_LATENCY_OPS),
	FUSE_OPT_KEY("--slow-every=", KEY_SLOW_EVERY),
	FUSE_OPT_KEY("--slow-ms=", KEY_SLOW_MS),
	FUSE_OPT_KEY("--inject=", KEY_INJECT),
	FUSE_OPT_KEY("--direct-io", KEY_DIRECT_IO),
	FUSE_OPT_KEY("--fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("--stats-file=", KEY_STATS_FILE),
	FUSE_OPT_KEY("--root-mode=", KEY_ROOT_MODE),
	FUSE_OPT_KEY("--no-auto-unmount", KEY_NO_AUTO_UNMOUNT),
	FUSE_OPT_KEY("--count-requests", KEY_COUNT_REQUESTS),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_END,
};

static void usage(const char *prog)
{
	printf("Usage: %s MOUNTPOINT [options]\n"
	       "\n"
	       "An in-memory FUSE filesystem that behaves like a slow, faulty network\n"
	       "filesystem: a test double for lustre-ebpf-stream.\n"
	       "\n"
	       "Latency:\n"
	       "  --latency-ms=N           wait N ms before answering each operation (0)\n"
	       "  --latency-ops=OP[,OP]    only these operations wait (default: all)\n"
	       "  --slow-every=K           every K-th waiting operation is slow...\n"
	       "  --slow-ms=M              ...by M extra ms\n"
	       "Faults:\n"
	       "  --inject=OP:ERR[:EVERY]  fail OP with ERR on every EVERY-th call (1);\n"
	       "                           repeatable, or comma-separated\n"
	       "  files named fail-eio*, fail-etimedout*, fail-enotconn* fail open,\n"
	       "  read and write with that errno (create and stat succeed)\n"
	       "Mount:\n"
	       "  --direct-io              bypass the page cache: one request per syscall\n"
	       "  --fsname=NAME            mount source name (" TESTFS_NAME ")\n"
	       "  --root-mode=OCTAL        mode of the root directory (0755)\n"
	       "  --no-auto-unmount        leave out -o auto_unmount\n"
	       "  --stats-file=PATH        write 'op count' lines on SIGUSR1 and at unmount\n"
	       "  --count-requests         also 'opcode_N count' lines: requests read from\n"
	       "                           /dev/fuse by FUSE opcode (no splice reads)\n"
	       "\n"
	       "OP is one of:",
	       prog);
	for (int op = 0; op < OP_MAX; op++)
		printf("%s %s", op % 10 ? "" : "\n ", op_names[op]);
	printf("\n  (lookup is an alias of getattr, which answers lookups)\nERR is one of:");
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		printf(" %s", errno_names[i].name);
	printf("\n\nExamples:\n"
	       "  %s /mnt/t --latency-ms=100 --latency-ops=getattr,read\n"
	       "  %s /mnt/t -f --inject=read:EIO,write:ENOSPC:3 --stats-file=/tmp/ops\n"
	       "\n"
	       "Defaults: -o default_permissions,subtype=" TESTFS_NAME ",auto_unmount,\n"
	       "entry_timeout=0,attr_timeout=0,negative_timeout=0 (every lookup reaches\n"
	       "the server), plus allow_other when run as root. FUSE options follow.\n\n",
	       prog, prog);
}

/* Parses a decimal (or, with base 8, octal) number in [0, max]; rejects garbage. */
static int parse_uint(const char *s, int base, unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_latency_ops(const char *list)
{
	const char *p = list;

	cfg.latency_some = true;
	for (;;) {
		size_t len = strcspn(p, ",");
		int op = op_from_name(p, len);

		if (op < 0) {
			fprintf(stderr, TESTFS_NAME ": unknown operation '%.*s'\n", (int)len, p);
			return -1;
		}
		cfg.latency_op[op] = true;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* One OP:ERR[:EVERY] rule of len bytes at rule. */
static int parse_inject_rule(const char *rule, size_t len)
{
	char buf[64];
	char *err_name, *every;
	unsigned int n = 1;
	int op, err;

	if (len >= sizeof(buf))
		goto bad;
	memcpy(buf, rule, len);
	buf[len] = '\0';
	err_name = strchr(buf, ':');
	if (!err_name)
		goto bad;
	*err_name++ = '\0';
	every = strchr(err_name, ':');
	if (every) {
		*every++ = '\0';
		if (parse_uint(every, 10, UINT_MAX, &n) || n == 0)
			goto bad;
	}
	op = op_from_name(buf, strlen(buf));
	err = errno_from_name(err_name, strlen(err_name));
	if (op < 0 || !err)
		goto bad;
	cfg.inject_err[op] = err;
	cfg.inject_every[op] = n;
	return 0;
bad:
	fprintf(stderr, TESTFS_NAME ": bad --inject rule '%.*s' (want OP:ERRNAME[:EVERY])\n",
		(int)len, rule);
	return -1;
}

static int parse_inject(const char *list)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (parse_inject_rule(p, len))
			return -1;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int set_stats_file(const char *path)
{
	char cwd[PATH_MAX];
	size_t need;

	if (!*path)
		return -1;
	if (path[0] == '/') {
		cfg.stats_file = strdup(path);
		return cfg.stats_file ? 0 : -1;
	}
	/* Made absolute now: the daemonized server runs in "/". */
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	need = strlen(cwd) + strlen(path) + 2;
	cfg.stats_file = malloc(need);
	if (!cfg.stats_file)
		return -1;
	snprintf(cfg.stats_file, need, "%s/%s", cwd, path);
	return 0;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	const char *val = strchr(arg, '=');
	unsigned int mode;

	(void)data;
	(void)outargs;
	val = val ? val + 1 : "";
	switch (key) {
	case KEY_LATENCY_MS:
		if (parse_uint(val, 10, TESTFS_MAX_MS, &cfg.latency_ms))
			break;
		return 0;
	case KEY_LATENCY_OPS:
		if (parse_latency_ops(val))
			return -1;
		return 0;
	case KEY_SLOW_EVERY:
		if (parse_uint(val, 10, UINT_MAX, &cfg.slow_every))
			break;
		return 0;
	case KEY_SLOW_MS:
		if (parse_uint(val, 10, TESTFS_MAX_MS, &cfg.slow_ms))
			break;
		return 0;
	case KEY_INJECT:
		return parse_inject(val) ? -1 : 0;
	case KEY_DIRECT_IO:
		cfg.direct_io = true;
		return 0;
	case KEY_FSNAME:
		/* A comma or backslash would need -o escaping; test names never do. */
		if (!*val || strpbrk(val, ",\\"))
			break;
		free(cfg.fsname);
		cfg.fsname = strdup(val);
		return cfg.fsname ? 0 : -1;
	case KEY_STATS_FILE:
		free(cfg.stats_file);
		if (set_stats_file(val))
			break;
		return 0;
	case KEY_ROOT_MODE:
		if (parse_uint(val, 8, 07777, &mode))
			break;
		cfg.root_mode = mode;
		return 0;
	case KEY_NO_AUTO_UNMOUNT:
		cfg.no_auto_unmount = true;
		return 0;
	case KEY_COUNT_REQUESTS:
		cfg.count_requests = true;
		return 0;
	case KEY_HELP:
		cfg.show_help = true;
		return 0;
	default:
		return 1; /* mount point and FUSE options go to fuse_main */
	}
	fprintf(stderr, TESTFS_NAME ": bad value in '%s'\n", arg);
	return -1;
}

/* Our defaults go first, so a later -o from the command line overrides them. */
static int add_default_mount_opts(struct fuse_args *args)
{
	char opts[512];
	int len;

	len = snprintf(opts, sizeof(opts),
		       "-odefault_permissions,subtype=%s,fsname=%s,entry_timeout=0,"
		       "attr_timeout=0,negative_timeout=0%s%s",
		       TESTFS_NAME, cfg.fsname ? cfg.fsname : TESTFS_NAME,
		       geteuid() == 0 ? ",allow_other" : "",
		       cfg.no_auto_unmount ? "" : ",auto_unmount");
	if (len < 0 || len >= (int)sizeof(opts))
		return -1;
	return fuse_opt_insert_arg(args, 1, opts);
}

/* ------------------------------------------------------------------------ */
/* --count-requests: fuse_main's steps, with a session loop of our own      */

#define COUNTED_WORKERS 10 /* fuse_loop_mt's default max_threads */

struct counted_loop {
	struct fuse_session *se;
	sem_t finished; /* posted by each worker that stops */
};

static void count_request(const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;
	unsigned int opc;

	if ((buf->flags & FUSE_BUF_IS_FD) || buf->size < sizeof(*in))
		return;
	opc = in->opcode < TESTFS_OPCODES - 1 ? in->opcode : TESTFS_OPCODES - 1;
	__atomic_add_fetch(&opcode_calls[opc], 1, __ATOMIC_RELAXED);
}

/* Cancelled only while waiting for a request, never while answering one. */
static void *counted_worker(void *arg)
{
	struct counted_loop *loop = arg;
	struct fuse_buf buf = {0};
	int res;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!fuse_session_exited(loop->se)) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(loop->se, &buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0) {
			fuse_session_exit(loop->se);
			break;
		}
		count_request(&buf);
		fuse_session_process_buf(loop->se, &buf);
	}
	free(buf.mem);
	sem_post(&loop->finished);
	return NULL;
}

static int counted_loop_run(struct fuse_session *se)
{
	struct counted_loop loop = {.se = se};
	pthread_t workers[COUNTED_WORKERS];
	size_t started = 0;

	if (sem_init(&loop.finished, 0, 0))
		return -1;
	while (started < COUNTED_WORKERS &&
	       !pthread_create(&workers[started], NULL, counted_worker, &loop))
		started++;
	if (!started)
		fuse_session_exit(se);
	/* A stop signal lands here or in a worker's read: both recheck. */
	while (!fuse_session_exited(se))
		sem_wait(&loop.finished);
	for (size_t i = 0; i < started; i++)
		pthread_cancel(workers[i]);
	for (size_t i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
	sem_destroy(&loop.finished);
	return started ? 0 : -1;
}

/* fuse_main's exit statuses: 1 options, 2 no mount point, 3-7 as it numbers them. */
static int counted_main(struct fuse_args *args)
{
	struct fuse_cmdline_opts opts;
	struct fuse_session *se;
	struct fuse *fuse;
	int err;

	if (fuse_parse_cmdline(args, &opts))
		return 1;
	err = 2;
	if (!opts.mountpoint) {
		fprintf(stderr, TESTFS_NAME ": no mount point given\n");
		goto out;
	}
	err = 3;
	fuse = fuse_new(args, &tfs_ops, sizeof(tfs_ops), NULL);
	if (!fuse)
		goto out;
	err = 4;
	if (fuse_mount(fuse, opts.mountpoint))
		goto destroy;
	err = 5;
	se = fuse_get_session(fuse);
	if (fuse_daemonize(opts.foreground))
		goto unmount;
	err = 6;
	if (fuse_set_signal_handlers(se))
		goto unmount;
	err = counted_loop_run(se) ? 7 : 0;
	fuse_remove_signal_handlers(se);
unmount:
	fuse_unmount(fuse);
destroy:
	fuse_destroy(fuse);
out:
	free(opts.mountpoint);
	return err;
}

static int root_create(void)
{
	fs.root = node_new(S_IFDIR | cfg.root_mode, NULL, NULL);
	return fs.root ? 0 : -1;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	sigset_t usr1;
	int err = 1;

	if (fuse_opt_parse(&args, NULL, testfs_opts, opt_proc))
		goto cleanup;
	if (cfg.slow_every && !cfg.slow_ms) {
		fprintf(stderr, TESTFS_NAME ": --slow-every needs --slow-ms\n");
		goto cleanup;
	}
	if (cfg.show_help) {
		usage(argv[0]);
		/* fuse_main prints its own options; an empty argv[0] skips its usage line. */
		if (fuse_opt_add_arg(&args, "--help"))
			goto cleanup;
		args.argv[0][0] = '\0';
	} else if (add_default_mount_opts(&args) || root_create()) {
		fprintf(stderr, TESTFS_NAME ": out of memory\n");
		goto cleanup;
	}
	if (cfg.stats_file) {
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	}
	if (cfg.count_requests && !cfg.show_help)
		err = counted_main(&args);
	else
		err = fuse_main(args.argc, args.argv, &tfs_ops, NULL);
	if (err == 8 && stop_signal)
		err = 0;
	/* fuse_main returns before init when mounting failed: free the root here. */
	if (fs.root)
		tree_free(fs.root);
cleanup:
	fuse_opt_free_args(&args);
	free(cfg.fsname);
	free(cfg.stats_file);
	return err;
}
