// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Syscalls of the access plane's generic fallback. */
#include <string.h>
#include <sys/syscall.h>
#include "probe/syscalls.h"

#define FD(sys, o)                                                                                 \
	{ #sys, SYS_##sys, { .target = LES_SYS_FD, .op = (o), .fd_arg = 0, .path_arg = -1,     \
			     .flags_arg = -1, .stat_arg = -1 } }
#define AT(sys, o, dirfd, path, flags)                                                             \
	{ #sys, SYS_##sys, { .target = LES_SYS_AT, .op = (o), .fd_arg = (dirfd),              \
			     .path_arg = (path), .flags_arg = (flags), .stat_arg = -1 } }
#define PATH(sys, o, path, flags)                                                                  \
	{ #sys, SYS_##sys, { .target = LES_SYS_PATH, .op = (o), .fd_arg = -1,                 \
			     .path_arg = (path), .flags_arg = (flags), .stat_arg = -1 } }
/* Stat calls: the exit reads st_dev from the buffer (argument buf). */
#define STAT_AT(sys, dirfd, path, buf, kind)                                                       \
	{ #sys, SYS_##sys, { .target = LES_SYS_AT, .op = LES_OP_GETATTR, .fd_arg = (dirfd),   \
			     .path_arg = (path), .flags_arg = -1, .stat_arg = (buf),              \
			     .stat_kind = (kind) } }
#define STAT_PATH(sys, path, buf)                                                                  \
	{ #sys, SYS_##sys, { .target = LES_SYS_PATH, .op = LES_OP_GETATTR, .fd_arg = -1,      \
			     .path_arg = (path), .flags_arg = -1, .stat_arg = (buf),              \
			     .stat_kind = LES_STAT_STAT } }

static const struct les_syscall_entry table[] = {
	/* data */
	FD(read, LES_OP_READ),
	FD(pread64, LES_OP_READ),
	FD(readv, LES_OP_READ),
	FD(preadv, LES_OP_READ),
	FD(preadv2, LES_OP_READ),
	FD(write, LES_OP_WRITE),
	FD(pwrite64, LES_OP_WRITE),
	FD(writev, LES_OP_WRITE),
	FD(pwritev, LES_OP_WRITE),
	FD(pwritev2, LES_OP_WRITE),
	FD(fsync, LES_OP_FSYNC),
	FD(fdatasync, LES_OP_FSYNC),
	/* namespace reads */
	AT(openat, LES_OP_OPEN, 0, 1, 2),
	AT(openat2, LES_OP_OPEN, 0, 1, -1),
#ifdef SYS_open
	PATH(open, LES_OP_OPEN, 0, 1),
	PATH(creat, LES_OP_OPEN, 0, -1),
#endif
	FD(close, LES_OP_CLOSE),
	FD(getdents64, LES_OP_READDIR),
#ifdef SYS_getdents
	FD(getdents, LES_OP_READDIR),
#endif
	STAT_AT(newfstatat, 0, 1, 2, LES_STAT_STAT),
	STAT_AT(statx, 0, 1, 4, LES_STAT_STATX),
	FD(fstat, LES_OP_GETATTR),
#ifdef SYS_stat
	STAT_PATH(stat, 0, 1),
	STAT_PATH(lstat, 0, 1),
#endif
	AT(readlinkat, LES_OP_READLINK, 0, 1, -1),
#ifdef SYS_readlink
	PATH(readlink, LES_OP_READLINK, 0, -1),
#endif
	PATH(getxattr, LES_OP_GETXATTR, 0, -1),
	PATH(lgetxattr, LES_OP_GETXATTR, 0, -1),
	FD(fgetxattr, LES_OP_GETXATTR),
	PATH(listxattr, LES_OP_LISTXATTR, 0, -1),
	PATH(llistxattr, LES_OP_LISTXATTR, 0, -1),
	FD(flistxattr, LES_OP_LISTXATTR),
	PATH(statfs, LES_OP_STATFS, 0, -1),
	FD(fstatfs, LES_OP_STATFS),
	/* namespace mutations */
	AT(mkdirat, LES_OP_MKDIR, 0, 1, -1),
	AT(mknodat, LES_OP_MKNOD, 0, 1, -1),
	{ "unlinkat", SYS_unlinkat,
	  { .target = LES_SYS_AT, .op = LES_OP_UNLINK, .fd_arg = 0, .path_arg = 1,
	    .flags_arg = 2, .rmdir_flag = 1, .stat_arg = -1 } },
	AT(renameat2, LES_OP_RENAME, 0, 1, -1),
#ifdef SYS_renameat
	AT(renameat, LES_OP_RENAME, 0, 1, -1),
#endif
	AT(linkat, LES_OP_LINK, 0, 1, -1),
	AT(symlinkat, LES_OP_SYMLINK, 1, 2, -1),
#ifdef SYS_mkdir
	PATH(mkdir, LES_OP_MKDIR, 0, -1),
	PATH(mknod, LES_OP_MKNOD, 0, -1),
	PATH(unlink, LES_OP_UNLINK, 0, -1),
	PATH(rmdir, LES_OP_RMDIR, 0, -1),
	PATH(rename, LES_OP_RENAME, 0, -1),
	PATH(link, LES_OP_LINK, 0, -1),
	PATH(symlink, LES_OP_SYMLINK, 1, -1),
	PATH(chmod, LES_OP_SETATTR, 0, -1),
	PATH(chown, LES_OP_SETATTR, 0, -1),
	PATH(lchown, LES_OP_SETATTR, 0, -1),
	PATH(utime, LES_OP_SETATTR, 0, -1),
	PATH(utimes, LES_OP_SETATTR, 0, -1),
#endif
	PATH(setxattr, LES_OP_SETXATTR, 0, -1),
	PATH(lsetxattr, LES_OP_SETXATTR, 0, -1),
	FD(fsetxattr, LES_OP_SETXATTR),
	PATH(removexattr, LES_OP_SETXATTR, 0, -1),
	PATH(lremovexattr, LES_OP_SETXATTR, 0, -1),
	FD(fremovexattr, LES_OP_SETXATTR),
	FD(fchmod, LES_OP_SETATTR),
	AT(fchmodat, LES_OP_SETATTR, 0, 1, -1),
	FD(fchown, LES_OP_SETATTR),
	AT(fchownat, LES_OP_SETATTR, 0, 1, -1),
	PATH(truncate, LES_OP_SETATTR, 0, -1),
	FD(ftruncate, LES_OP_SETATTR),
	AT(utimensat, LES_OP_SETATTR, 0, 1, -1),
};

int les_syscall_prog(const char *prog_name)
{
	if (strncmp(prog_name, "sys_exit_tp", strlen("sys_exit_tp")) == 0)
		return 1;
	if (strncmp(prog_name, "sys_enter_tp", strlen("sys_enter_tp")) == 0)
		return 2;
	return 0;
}

const struct les_syscall_entry *les_syscall_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}
