#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Corrupt and truncated database files: every reader names the file without
# crashing (the report tools in their report too, exit 2); the rest stays
# readable.
. "$top_srcdir/tests/lib.sh"

# Readers to check: the test helper and every report tool (make check builds
# them all: none is optional).
readers() {
	echo "dcpi-test-helper check db"
	echo "dcpiprof -d db -E 1"
	echo "dcpiprof -d db -E 1 --json"
	echo "dcpilist -d db -E 1 main"
	echo "dcpistats -d db 1"
	echo "dcpicalc -d db -E 1 main"
}

make_db() { # [DIR]
	rm -rf "${1:-db}"
	dcpi-test-helper build "${1:-db}" >/dev/null <<-'DESC'
	epoch label=one
	event cycles used=clock period=1000000 unit=ns
	image aaaa path=/bin/true
	profile aaaa cycles
	0x1000 5
	0x1008 7
	0x2000 100
	image bbbb path=/bin/false
	profile bbbb cycles
	0x10 1
	DESC
}

# check_readers FILE: every reader must name FILE; the checker fails
# (status 1), the report tools print what they can, say in their own
# output that it is incomplete, and exit 2 (docs/dcpi.7) -- or 1, as on
# the sound database, when what was asked for is not there (dcpilist main
# of a stripped /bin/true).
check_readers() {
	local file=$1 cmd want
	while read -r cmd; do
		[ -n "$cmd" ] || continue
		want=2
		case $cmd in dcpi-test-helper*) want=1 ;; esac
		{ make_db sound && ${cmd//-d db/-d sound} >/dev/null 2>&1; } || want=1
		$cmd >out 2>err
		rc=$?
		if [ $rc -ne $want ]; then
			echo "'$cmd' exited $rc on damaged $file (want $want)"; cat err; return 1
		fi
		grep -q "$file" err || { echo "'$cmd' did not name $file:"; cat err; return 1; }
		[ $want = 1 ] || grep -q "^  damaged  $file: \|\"file\": \"$file\"" out ||
			{ echo "'$cmd' did not say in its report that $file is damaged:"; cat out; return 1; }
	done <<-EOF2
	$(readers)
	EOF2
}

test_expect_success 'fixture database is readable' '
	make_db && dcpi-test-helper check db >out && test $(wc -l <out) = 2
'

prof=db/000001/aaaa.cycles.prof
size=$(make_db && stat -c %s $prof)
for len in 0 8 64 127 128 $((size / 2)) $((size * 3 / 4)) $((size - 1)); do
	test_expect_success "profile truncated to $len bytes is reported by name" "
		make_db && truncate -s $len $prof && check_readers $prof
	"
done

for off in 0 9 13 20 30 45 60 100 121 126 128 $((size - 1)); do
	test_expect_success "profile with byte $off flipped is reported by name" "
		make_db &&
		printf '\\x$(printf %02x $(( (off * 37 + 1) % 255 + 1 )))' |
			dd of=$prof bs=1 seek=$off conv=notrunc 2>/dev/null &&
		! cmp -s $prof /dev/null && check_readers $prof
	"
done

test_expect_success 'a damaged profile leaves the other profiles readable' '
	make_db && truncate -s 100 $prof &&
	test_must_fail dcpi-test-helper check db >out 2>err &&
	grep -q "bbbb cycles" out
'

for f in meta images; do
	test_expect_success "truncated $f is reported by name" "
		make_db && truncate -s 20 db/000001/$f &&
		test_must_fail dcpi-test-helper check db 2>err && grep -q 'db/000001/$f' err
	"
	test_expect_success "$f with a changed byte is reported by name" "
		make_db && sed -i '2s/./X/' db/000001/$f &&
		test_must_fail dcpi-test-helper check db 2>err && grep -q 'db/000001/$f' err &&
		grep -q 'bad checksum' err
	"
done

test_expect_success 'a symlink in place of a profile is refused' '
	make_db && rm $prof && ln -s /etc/passwd $prof &&
	test_must_fail dcpi-test-helper check db 2>err && grep -q "symbolic link" err
'

test_expect_success 'a directory that is not a database is refused' '
	mkdir notdb && echo x >notdb/file &&
	test_must_fail dcpi-test-helper check notdb 2>err && grep -q "not a dcpi database" err
'

test_expect_success 'an unknown format version is refused' '
	make_db && echo "dcpi-db 2" >db/FORMAT &&
	test_must_fail dcpi-test-helper check db 2>err && grep -q "unsupported format version" err
'

test_done
