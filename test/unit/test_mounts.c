// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Mount table: mountinfo parsing, families, fs names, device and path lookup. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "util/json.h"
#include "model/mounts.h"
#include "decode/mountwatch.h"
#include "model/observed.h"

/*
 * A mount namespace with one of everything. Mount ids are chosen so that
 * tests can name entries by id.
 */
static const char fixture[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"23 22 0:21 / /proc rw,nosuid,nodev,noexec - proc proc rw\n"
	"40 22 0:52 / /mnt/nfs rw,relatime shared:40 - nfs4 server1:/export/home rw,vers=4.2\n"
	"41 22 0:53 / /mnt/nfs3 rw shared:2 master:3 propagate_from:4 unbindable - nfs 10.1.1.1:/vol rw,vers=3\n"
	"50 22 0:60 / /mnt/my\\040data rw - fuse.sshfs user@host:/home/my\\040dir rw,user_id=0\n"
	"51 22 0:61 / /mnt/gluster rw - fuse.glusterfs gl1:/vol0 rw\n"
	"52 22 0:62 / /mnt/plain rw - fuse myfs rw\n"
	"53 22 8:17 / /mnt/usb rw - fuseblk /dev/sdb1 rw\n"
	"60 22 0:70 / /lustre/scratch rw - lustre 10.0.0.1@o2ib:10.0.0.2@o2ib:/scratch rw,flock\n"
	"61 22 0:70 /proj /work/proj rw - lustre 10.0.0.1@o2ib:10.0.0.2@o2ib:/scratch rw,flock\n"
	"62 22 0:71 /sub /mnt/subonly rw - nfs4 srv:/sub rw\n"
	"this line is garbage and is skipped\n"
	"70 22 259:3 / /mnt/a rw - ext4 /dev/nvme0n1p3 rw\n"
	"71 22 0:80 / /mnt/ab rw - nfs srv:/ab rw\n"
	"72 70 0:81 / /mnt/a/b rw - nfs srv:/ab2 rw\n"
	"80 22 0:90 / /mnt/over rw - nfs4 old:/x rw\n"
	"81 80 0:91 / /mnt/over rw - tmpfs tmpfs rw\n"
	"82 22 0:92 / /mnt/over2 rw - tmpfs tmpfs rw\n"
	"83 82 0:93 / /mnt/over2 rw - nfs4 new:/y rw\n";

#define TMPDIR_TEMPLATE "/tmp/les-test-mounts.XXXXXX"

static char tmpdir[sizeof(TMPDIR_TEMPLATE)];
static char fixture_path[sizeof(tmpdir) + 32];
static struct les_mount_table table;

/* A new directory dir (sizeof(TMPDIR_TEMPLATE)) and its file "mountinfo" open for writing. */
static FILE *new_mountinfo(char *dir, char *path, size_t path_len)
{
	FILE *f;

	memcpy(dir, TMPDIR_TEMPLATE, sizeof(TMPDIR_TEMPLATE));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, path_len, "%s/mountinfo", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	return f;
}

static void write_fixture(void)
{
	FILE *f = new_mountinfo(tmpdir, fixture_path, sizeof(fixture_path));

	ck_assert_uint_eq(fwrite(fixture, 1, sizeof(fixture) - 1, f), sizeof(fixture) - 1);
	ck_assert_int_eq(fclose(f), 0);
}

static void table_setup(void)
{
	write_fixture();
	ck_assert_int_eq(les_mount_table_load(&table, fixture_path), 0);
}

static void table_teardown(void)
{
	les_mount_table_free(&table);
	unlink(fixture_path);
	rmdir(tmpdir);
}

static const struct les_mount *by_id(unsigned int id)
{
	for (size_t i = 0; i < table.n; i++)
		if (table.v[i].mount_id == id)
			return &table.v[i];
	ck_abort_msg("mount id %u not in the table", id);
	return NULL;
}

/* --- single lines ------------------------------------------------------ */

START_TEST(test_parse_proc5_example)
{
	struct les_mount m;

	ck_assert_int_eq(les_mount_parse_line("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 "
					      "/dev/root rw,errors=continue\n",
					      &m),
			 0);
	ck_assert_uint_eq(m.mount_id, 36);
	ck_assert_uint_eq(m.parent_id, 35);
	ck_assert_uint_eq(m.major, 98);
	ck_assert_uint_eq(m.minor, 0);
	ck_assert_uint_eq(m.kdev, 98U << 20);
	ck_assert_str_eq(m.root, "/mnt1");
	ck_assert_str_eq(m.mount_point, "/mnt2");
	ck_assert_str_eq(m.fs_type, "ext3");
	ck_assert_str_eq(m.source, "/dev/root");
	ck_assert_str_eq(m.super_opts, "rw,errors=continue");
	ck_assert_str_eq(m.fs_name, "/dev/root");
	ck_assert_int_eq(m.family, LES_FS_OTHER);
	les_mount_free(&m);
	ck_assert_ptr_null(m.root);
}
END_TEST

START_TEST(test_parse_optional_fields)
{
	static const char *const lines[] = {
		"1 0 0:5 / /x rw - tmpfs none rw",
		"1 0 0:5 / /x rw shared:7 - tmpfs none rw",
		"1 0 0:5 / /x rw shared:7 master:2 propagate_from:3 unbindable - tmpfs none rw",
	};
	struct les_mount m;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		ck_assert_int_eq(les_mount_parse_line(lines[i], &m), 0);
		ck_assert_str_eq(m.mount_point, "/x");
		ck_assert_str_eq(m.fs_type, "tmpfs");
		ck_assert_str_eq(m.source, "none");
		ck_assert_str_eq(m.super_opts, "rw");
		les_mount_free(&m);
	}
}
END_TEST

START_TEST(test_parse_escapes)
{
	struct les_mount m;

	ck_assert_int_eq(les_mount_parse_line("5 1 0:40 /r\\040oot /mnt/a\\040b\\011c\\012d\\134e "
					      "rw - fuse.sshfs me@h:/x\\040y rw",
					      &m),
			 0);
	ck_assert_str_eq(m.root, "/r oot");
	ck_assert_str_eq(m.mount_point, "/mnt/a b\tc\nd\\e");
	ck_assert_str_eq(m.source, "me@h:/x y");
	ck_assert_str_eq(m.fs_name, "me@h:/x y");
	les_mount_free(&m);

	/* A backslash that is not an octal escape stays. */
	ck_assert_int_eq(les_mount_parse_line("5 1 0:40 / /mnt/a\\9b\\04 rw - tmpfs x rw", &m), 0);
	ck_assert_str_eq(m.mount_point, "/mnt/a\\9b\\04");
	les_mount_free(&m);
}
END_TEST

START_TEST(test_parse_garbage)
{
	static const char *const garbage[] = {
		"",
		"\n",
		"garbage",
		"1",
		"1 2",
		"1 2 3:4",
		"1 2 3:4 / /mnt",
		"1 2 3:4 / /mnt rw",
		"1 2 3:4 / /mnt rw shared:1",
		"1 2 3:4 / /mnt rw shared:1 ext4 /dev/x rw",
		"1 2 3:4 / /mnt rw -",
		"1 2 3:4 / /mnt rw - ext4",
		"1 2 3:4 / /mnt rw -  /dev/x rw",
		"a 2 3:4 / /mnt rw - ext4 /dev/x rw",
		"1 b 3:4 / /mnt rw - ext4 /dev/x rw",
		"-1 2 3:4 / /mnt rw - ext4 /dev/x rw",
		"1 2 34 / /mnt rw - ext4 /dev/x rw",
		"1 2 3: / /mnt rw - ext4 /dev/x rw",
		"1 2 :4 / /mnt rw - ext4 /dev/x rw",
		"1 2 3:x / /mnt rw - ext4 /dev/x rw",
		"1 2 4096:0 / /mnt rw - ext4 /dev/x rw",
		"1 2 0:1048576 / /mnt rw - ext4 /dev/x rw",
		"99999999999 2 3:4 / /mnt rw - ext4 /dev/x rw",
		"1 2 3:4  /mnt rw - ext4 /dev/x rw",
		"1 2 3:4 / relative rw - ext4 /dev/x rw",
		"1 2 3:4 / /mnt rw - ext4 /dev/x rw",
	};
	struct les_mount m;

	/* The last line is valid: it proves the others fail for their flaw. */
	for (size_t i = 0; i + 1 < sizeof(garbage) / sizeof(garbage[0]); i++) {
		ck_assert_msg(les_mount_parse_line(garbage[i], &m) == -EINVAL, "accepted '%s'",
			      garbage[i]);
		ck_assert_ptr_null(m.root);
		ck_assert_ptr_null(m.fs_name);
	}
	ck_assert_int_eq(les_mount_parse_line(garbage[sizeof(garbage) / sizeof(garbage[0]) - 1], &m),
			 0);
	les_mount_free(&m);
	ck_assert_int_eq(les_mount_parse_line(NULL, &m), -EINVAL);
}
END_TEST

/* Every prefix of a valid line and random bytes: an answer, never a crash. */
START_TEST(test_parse_fuzz)
{
	const char *line = "41 22 0:53 / /mnt/a\\040b rw shared:2 master:3 - nfs 10.1.1.1:/vol rw";
	char buf[256];
	struct les_mount m;
	unsigned seed = 12345;

	for (size_t n = 0; n <= strlen(line); n++) {
		int rc;

		snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
		rc = les_mount_parse_line(buf, &m);
		ck_assert_msg(rc == 0 || rc == -EINVAL, "prefix %zu: %d", n, rc);
		if (!rc)
			ck_assert(m.root && m.mount_point && m.fs_type && m.source &&
				  m.super_opts && m.fs_name);
		les_mount_free(&m);
	}
	for (int iter = 0; iter < 5000; iter++) {
		size_t n = (size_t)rand_r(&seed) % (sizeof(buf) - 1);

		for (size_t i = 0; i < n; i++) {
			/* Mostly the characters mountinfo is made of. */
			static const char alphabet[] = "0123456789 :/-\\abc";
			int r = rand_r(&seed);

			buf[i] = r & 1 ? alphabet[(r >> 1) % (sizeof(alphabet) - 1)] : (char)(r >> 8);
			if (!buf[i])
				buf[i] = ' ';
		}
		buf[n] = '\0';
		int rc = les_mount_parse_line(buf, &m);

		ck_assert_msg(rc == 0 || rc == -EINVAL, "seed 12345 iteration %d: %d", iter, rc);
		les_mount_free(&m);
	}
}
END_TEST

/* --- families and names -------------------------------------------------- */

START_TEST(test_families)
{
	ck_assert_int_eq(les_fs_family_of("lustre"), LES_FS_LUSTRE);
	ck_assert_int_eq(les_fs_family_of("nfs"), LES_FS_NFS);
	ck_assert_int_eq(les_fs_family_of("nfs4"), LES_FS_NFS);
	ck_assert_int_eq(les_fs_family_of("fuse"), LES_FS_FUSE);
	ck_assert_int_eq(les_fs_family_of("fuse.glusterfs"), LES_FS_FUSE);
	ck_assert_int_eq(les_fs_family_of("fuse.sshfs"), LES_FS_FUSE);
	ck_assert_int_eq(les_fs_family_of("fuseblk"), LES_FS_OTHER);
	ck_assert_int_eq(les_fs_family_of("fusectl"), LES_FS_OTHER);
	ck_assert_int_eq(les_fs_family_of("nfsd"), LES_FS_OTHER);
	ck_assert_int_eq(les_fs_family_of("ext4"), LES_FS_OTHER);
	ck_assert_int_eq(les_fs_family_of(""), LES_FS_OTHER);
	ck_assert_int_eq(les_fs_family_of(NULL), LES_FS_OTHER);
	ck_assert_str_eq(les_fs_family_name(LES_FS_LUSTRE), "lustre");
	ck_assert_str_eq(les_fs_family_name(LES_FS_FAMILY_MAX), "other");
}
END_TEST

START_TEST(test_fs_names)
{
	ck_assert_str_eq(by_id(60)->fs_name, "scratch");
	ck_assert_int_eq(by_id(60)->family, LES_FS_LUSTRE);
	ck_assert_str_eq(by_id(40)->fs_name, "server1:/export/home");
	ck_assert_int_eq(by_id(40)->family, LES_FS_NFS);
	ck_assert_str_eq(by_id(41)->fs_name, "10.1.1.1:/vol");
	ck_assert_str_eq(by_id(50)->fs_name, "user@host:/home/my dir");
	ck_assert_int_eq(by_id(50)->family, LES_FS_FUSE);
	ck_assert_str_eq(by_id(51)->fs_type, "fuse.glusterfs");
	ck_assert_str_eq(by_id(51)->fs_name, "gl1:/vol0");
	ck_assert_str_eq(by_id(52)->fs_name, "myfs");
	ck_assert_int_eq(by_id(52)->family, LES_FS_FUSE);
	ck_assert_int_eq(by_id(53)->family, LES_FS_OTHER);
}
END_TEST

START_TEST(test_lustre_sources)
{
	static const struct {
		const char *source, *fs_name;
	} cases[] = {
		{ "10.0.0.1@o2ib:10.0.0.2@o2ib:/scratch", "scratch" },
		{ "mgs@tcp:/fsname", "fsname" },
		{ "mgs@tcp:/fsname/sub/dir", "fsname" },
		{ "10.0.0.1@tcp,10.0.0.3@tcp:10.0.0.2@tcp:/home", "home" },
		{ "no-separator", "no-separator" },
		{ "mgs@tcp:/", "mgs@tcp:/" },
	};
	char line[256];
	struct les_mount m;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(line, sizeof(line), "60 22 0:70 / /l rw - lustre %s rw", cases[i].source);
		ck_assert_int_eq(les_mount_parse_line(line, &m), 0);
		ck_assert_str_eq(m.fs_name, cases[i].fs_name);
		ck_assert_str_eq(m.source, cases[i].source);
		les_mount_free(&m);
	}
}
END_TEST

/* --- device numbers ------------------------------------------------------ */

START_TEST(test_kdev)
{
	struct les_mount m;

	ck_assert_uint_eq(les_kdev_from_user(makedev(0, 52)), 52);
	ck_assert_uint_eq(les_kdev_from_user(makedev(259, 3)), (259U << 20) | 3);
	/* glibc splits minors above 255 across the word; the kernel does not. */
	ck_assert_uint_eq(les_kdev_from_user(makedev(8, 300)), (8U << 20) | 300);
	ck_assert_uint_eq(les_kdev_from_user(makedev(4095, 1048575)), 0xffffffffU);
	ck_assert(les_kdev_to_user((259U << 20) | 3) == makedev(259, 3));
	ck_assert(les_kdev_to_user((8U << 20) | 300) == makedev(8, 300));
	ck_assert(les_kdev_to_user(52) == makedev(0, 52));

	ck_assert_int_eq(les_mount_parse_line("1 0 259:3 / /n rw - ext4 /dev/nvme0n1p3 rw", &m), 0);
	ck_assert_uint_eq(m.kdev, 0x10300003U);
	les_mount_free(&m);
	ck_assert_int_eq(les_mount_parse_line("1 0 0:52 / /n rw - nfs4 s:/ rw", &m), 0);
	ck_assert_uint_eq(m.kdev, 52);
	les_mount_free(&m);
}
END_TEST

START_TEST(test_find_dev)
{
	/* 60 and its bind mount 61 share 0:70: the one showing the whole fs wins. */
	ck_assert_ptr_eq(les_mount_table_find_dev(&table, 70), by_id(60));
	ck_assert_ptr_eq(les_mount_table_find_dev(&table, 52), by_id(40));
	ck_assert_ptr_eq(les_mount_table_find_dev(&table, (259U << 20) | 3), by_id(70));
	/* Only a subtree is mounted: that mount is still found. */
	ck_assert_ptr_eq(les_mount_table_find_dev(&table, 71), by_id(62));
	ck_assert_ptr_null(les_mount_table_find_dev(&table, 12345));
	ck_assert_str_eq(by_id(61)->root, "/proj");
}
END_TEST

/* --- the table ----------------------------------------------------------- */

START_TEST(test_load_fixture)
{
	/* 18 mounts; the garbage line is skipped, not fatal. */
	ck_assert_uint_eq(table.n, 18);
	ck_assert_str_eq(table.v[0].mount_point, "/");
	ck_assert_str_eq(by_id(50)->mount_point, "/mnt/my data");
	ck_assert_int_eq(les_mount_table_load(&(struct les_mount_table){ 0 }, "/nonexistent/x"),
			 -ENOENT);
}
END_TEST

static void assert_path(const char *path, unsigned int want_id, bool want_exact)
{
	bool exact = !want_exact;
	const struct les_mount *m = les_mount_table_find_path(&table, path, &exact);

	ck_assert_msg(m != NULL, "%s: no mount", path);
	ck_assert_msg(m->mount_id == want_id, "%s: mount %u, want %u", path, m->mount_id, want_id);
	ck_assert_msg(exact == want_exact, "%s: exact %d", path, exact);
}

START_TEST(test_find_path)
{
	bool exact = true;

	assert_path("/", 22, true);
	assert_path("/etc/passwd", 22, false);
	assert_path("/mnt/a", 70, true);
	assert_path("/mnt/a/", 70, true);
	assert_path("/mnt/a/x", 70, false);
	assert_path("/mnt/a/bc", 70, false); /* "/mnt/a/b" does not hold "/mnt/a/bc" */
	assert_path("/mnt/ab", 71, true); /* "/mnt/a" does not hold "/mnt/ab" */
	assert_path("/mnt/ab/x", 71, false);
	assert_path("/mnt/a/b", 72, true); /* the longest prefix */
	assert_path("/mnt/a/b/c/d", 72, false);
	assert_path("/mnt/abc", 22, false);
	assert_path("/mnt/my data/f", 50, false);
	assert_path("/lustre/scratch/u/file", 60, false);
	assert_path("/mnt/over", 81, true); /* the top of an over-mount */
	assert_path("/mnt/over2/f", 83, false);
	ck_assert_ptr_null(les_mount_table_find_path(&table, "relative/path", &exact));
	ck_assert(!exact);
	ck_assert_ptr_nonnull(les_mount_table_find_path(&table, "/", NULL));
}
END_TEST

START_TEST(test_network)
{
	static const unsigned int want[] = { 40, 41, 50, 51, 52, 60, 61, 62, 71, 72, 83 };
	const struct les_mount *found[32];
	int n = les_mount_table_network(&table, found, 32);

	/* 80 is hidden by the tmpfs over it; 83 is on top of a tmpfs. */
	ck_assert_int_eq(n, (int)(sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < n; i++)
		ck_assert_uint_eq(found[i]->mount_id, want[i]);

	ck_assert_int_eq(les_mount_table_network(&table, found, 3), 3);
	ck_assert_uint_eq(found[2]->mount_id, 50);
	ck_assert_int_eq(les_mount_table_network(&table, found, 0), 0);
}
END_TEST

/* --- the real system ----------------------------------------------------- */

START_TEST(test_real_mountinfo)
{
	struct les_mount_table real;
	const struct les_mount *m;
	bool exact = false;

	ck_assert_int_eq(les_mount_table_load(&real, NULL), 0);
	ck_assert_uint_gt(real.n, 0);
	m = les_mount_table_find_path(&real, "/", &exact);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->mount_point, "/");
	ck_assert(exact);

	/* realpath() resolution: "/." and "//" are "/" too. */
	ck_assert_ptr_eq(les_mount_table_resolve(&real, "/.", &exact), m);
	ck_assert(exact);
	m = les_mount_table_resolve(&real, "/usr/bin/..", &exact);
	ck_assert_ptr_nonnull(m);
	errno = 0;
	ck_assert_ptr_null(les_mount_table_resolve(&real, "/nonexistent/les-test", &exact));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert(!exact);
	les_mount_table_free(&real);
	ck_assert_ptr_null(real.v);
}
END_TEST

/* --- observed mounts at their limits -------------------------------------- */

#define MANY_MOUNTS 20
#define LONG_MOUNT  2 /* its fsname makes its JSON longer than LES_MOUNT_JSON_MAX */

static char many_dir[sizeof(TMPDIR_TEMPLATE)];
static char many_path[sizeof(many_dir) + 32];
static struct les_mount_table many;

/*
 * A real mountinfo text: MANY_MOUNTS FUSE mounts on real directories (so
 * that --mount paths resolve), one of them with a 1600-byte fsname.
 */
static void many_setup(void)
{
	char dir[sizeof(many_dir) + 16], fsname[1700];
	FILE *f = new_mountinfo(many_dir, many_path, sizeof(many_path));

	fprintf(f, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
	for (int i = 0; i < MANY_MOUNTS; i++) {
		snprintf(dir, sizeof(dir), "%s/f%d", many_dir, i);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		if (i == LONG_MOUNT) {
			memset(fsname, 'x', 1600);
			fsname[1600] = '\0';
		} else {
			snprintf(fsname, sizeof(fsname), "fs%d", i);
		}
		fprintf(f, "%d 22 0:%d / %s rw - fuse.app %s rw,user_id=1000\n", 100 + i, 100 + i,
			dir, fsname);
	}
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(les_mount_table_load(&many, many_path), 0);
}

static void many_teardown(void)
{
	char dir[sizeof(many_dir) + 16];

	les_mount_table_free(&many);
	for (int i = 0; i < MANY_MOUNTS; i++) {
		snprintf(dir, sizeof(dir), "%s/f%d", many_dir, i);
		rmdir(dir);
	}
	unlink(many_path);
	rmdir(many_dir);
}

/* The mounts auto-detection observes: the first 16 but the long one, in order. */
static void assert_first_mounts(const struct les_observed *obs)
{
	char want[sizeof(many_dir) + 16];

	ck_assert_uint_eq(obs->n, LES_MAX_MOUNTS);
	ck_assert_uint_eq(obs->skipped_too_long, 1);
	ck_assert_uint_eq(obs->skipped_limit, MANY_MOUNTS - 1 - LES_MAX_MOUNTS);
	for (size_t i = 0; i < obs->n; i++) {
		snprintf(want, sizeof(want), "%s/f%zu", many_dir, i < LONG_MOUNT ? i : i + 1);
		ck_assert_str_eq(obs->m[i].mount_point, want);
		ck_assert_uint_gt(obs->m[i].json_len, 0);
		ck_assert_ptr_nonnull(strstr(obs->m[i].json, "\"fuse.app\""));
	}
}

/* What les_observed_warn_skipped writes, in buf. */
static size_t warn_text(const struct les_observed *obs, const struct les_observed *prev, char *buf,
			size_t len)
{
	FILE *f = fmemopen(buf, len, "w");
	long n;

	ck_assert_ptr_nonnull(f);
	les_observed_warn_skipped(obs, prev, f);
	n = ftell(f);
	fclose(f);
	return (size_t)n;
}

/*
 * Auto-detection with more mounts than the limit and one too long: start
 * and reselect both observe the 16 others, in order, count the rest and
 * say so once on stderr.
 */
START_TEST(test_observed_many_and_long)
{
	struct les_observed *obs = calloc(1, sizeof(*obs)), *again = calloc(1, sizeof(*again));
	char err[512], text[512], stats[256];
	struct jw w;

	ck_assert_int_eq(les_observed_select(obs, &many, NULL, 0, err, sizeof(err)), 0);
	assert_first_mounts(obs);
	ck_assert_int_eq(les_observed_reselect(again, &many, NULL, 0), 0);
	assert_first_mounts(again);

	ck_assert_uint_gt(warn_text(obs, NULL, text, sizeof(text)), 0);
	ck_assert_msg(strstr(text, "4 mount(s) not observed: 3 past the limit of 16, 1 too long") &&
			      !strchr(text, '\n')[1],
		      "%s", text);
	ck_assert_uint_eq(warn_text(again, obs, text, sizeof(text)), 0); /* said already */

	jw_init(&w, stats, sizeof(stats));
	jw_obj_begin(&w);
	les_observed_stats_json(obs, &w);
	jw_obj_end(&w);
	stats[w.len] = '\0';
	ck_assert_str_eq(
		stats, "{\"mounts\":{\"observed\":16,\"skipped_limit\":3,\"skipped_too_long\":1}}");
	les_observed_free(obs);
	les_observed_free(again);
	free(obs);
	free(again);
}
END_TEST

/* --mount on the long mount: left out, the other paths kept; alone, nothing to observe. */
START_TEST(test_observed_long_path)
{
	struct les_observed *obs = calloc(1, sizeof(*obs));
	char err[512], p_long[sizeof(many_dir) + 16], p_ok[sizeof(many_dir) + 16];
	const char *both[] = {p_long, p_ok}, *alone[] = {p_long};

	snprintf(p_long, sizeof(p_long), "%s/f%d", many_dir, LONG_MOUNT);
	snprintf(p_ok, sizeof(p_ok), "%s/f5", many_dir);
	ck_assert_int_eq(les_observed_select(obs, &many, both, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(obs->n, 1);
	ck_assert_str_eq(obs->m[0].mount_point, p_ok);
	ck_assert_uint_eq(obs->skipped_too_long, 1);
	les_observed_free(obs);

	ck_assert_int_eq(les_observed_reselect(obs, &many, both, 2), 0);
	ck_assert_uint_eq(obs->n, 1);
	ck_assert_str_eq(obs->m[0].mount_point, p_ok);
	ck_assert_uint_eq(obs->skipped_too_long, 1);
	les_observed_free(obs);

	ck_assert_int_eq(les_observed_select(obs, &many, alone, 1, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "too long") != NULL, "%s", err);
	les_observed_free(obs);
	free(obs);
}
END_TEST

/*
 * One Lustre filesystem mounted twice: both superblocks have one s_dev, so
 * the second mount's records name the first, and a note says so once.
 */
START_TEST(test_observed_shared_dev)
{
	struct les_observed *obs = calloc(1, sizeof(*obs)), *again = calloc(1, sizeof(*again));
	char dir[sizeof(TMPDIR_TEMPLATE)], path[sizeof(dir) + 32], m1[sizeof(dir) + 8],
		m2[sizeof(dir) + 8], err[256], text[512];
	const char *both[] = {m1, m2};
	struct les_mount_table t;
	FILE *f = new_mountinfo(dir, path, sizeof(path));

	snprintf(m1, sizeof(m1), "%s/m1", dir);
	snprintf(m2, sizeof(m2), "%s/m2", dir);
	ck_assert_int_eq(mkdir(m1, 0700), 0);
	ck_assert_int_eq(mkdir(m2, 0700), 0);
	fprintf(f, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
	fprintf(f, "90 22 1126:1031 / %s rw - lustre 10.0.0.1@tcp:/lustre rw,flock\n", m1);
	fprintf(f, "91 22 1126:1031 / %s rw - lustre 10.0.0.1@tcp:/lustre rw,flock\n", m2);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(les_mount_table_load(&t, path), 0);

	ck_assert_int_eq(les_observed_select(obs, &t, both, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(obs->n, 1);
	ck_assert_str_eq(obs->m[0].mount_point, m1);
	ck_assert_uint_eq(obs->shared_dev, 1);
	ck_assert_uint_gt(warn_text(obs, NULL, text, sizeof(text)), 0);
	ck_assert_msg(strstr(text, "note: 1 mount(s) on the device of an observed one") &&
			      strstr(text, m2) && !strchr(text, '\n')[1],
		      "%s", text);
	ck_assert_int_eq(les_observed_select(again, &t, NULL, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(again->shared_dev, 1);
	ck_assert_uint_eq(warn_text(again, obs, text, sizeof(text)), 0); /* said already */

	les_observed_free(obs);
	les_observed_free(again);
	free(obs);
	free(again);
	les_mount_table_free(&t);
	rmdir(m1);
	rmdir(m2);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *mounts_suite(void)
{
	Suite *s = suite_create("mounts");
	TCase *tc;

	tc = tcase_create("parse_line");
	tcase_add_test(tc, test_parse_proc5_example);
	tcase_add_test(tc, test_parse_optional_fields);
	tcase_add_test(tc, test_parse_escapes);
	tcase_add_test(tc, test_parse_garbage);
	tcase_add_test(tc, test_parse_fuzz);
	suite_add_tcase(s, tc);

	tc = tcase_create("families");
	tcase_add_test(tc, test_families);
	tcase_add_test(tc, test_lustre_sources);
	suite_add_tcase(s, tc);

	tc = tcase_create("kdev");
	tcase_add_test(tc, test_kdev);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, table_setup, table_teardown);
	tcase_add_test(tc, test_load_fixture);
	tcase_add_test(tc, test_fs_names);
	tcase_add_test(tc, test_find_dev);
	tcase_add_test(tc, test_find_path);
	tcase_add_test(tc, test_network);
	suite_add_tcase(s, tc);

	tc = tcase_create("observed");
	tcase_add_checked_fixture(tc, many_setup, many_teardown);
	tcase_add_test(tc, test_observed_many_and_long);
	tcase_add_test(tc, test_observed_long_path);
	tcase_add_test(tc, test_observed_shared_dev);
	suite_add_tcase(s, tc);

	tc = tcase_create("real");
	tcase_add_test(tc, test_real_mountinfo);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mounts_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
