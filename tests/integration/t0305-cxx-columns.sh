#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Long demangled C++ names keep the columns in line: a C++ program built
# here (g++), samples at real offsets of its functions (a fixture database),
# then dcpiprof's text and dcpidiff's, where the image column starts at the
# same place on every row and a name longer than its column is cut in the
# middle (its start and its end kept, an ellipsis between), and dcpi-tui's
# procedures view at 80 columns, where the names are sized by their content
# (at most 40) and the images stay in line.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

command -v g++ >/dev/null || skip_all "no g++ to build the C++ program"

test_expect_success 'a C++ program with long demangled names' '
	cat >prog.cc <<-\EOF &&
	#include <map>
	#include <string>
	#include <vector>
	namespace inventory { namespace detail {
	template <typename K, typename V> struct registry {
		std::map<K, std::vector<V>> items;
		__attribute__((noinline)) long add_all(const K &k, const std::vector<V> &vs)
		{
			auto &v = items[k];
			v.insert(v.end(), vs.begin(), vs.end());
			return (long)v.size();
		}
	};
	} }
	__attribute__((noinline)) long count(int n)
	{
		long s = 0;
		for (int i = 0; i < n; i++)
			s += i;
		return s;
	}
	int main(int argc, char **argv)
	{
		inventory::detail::registry<std::string, std::vector<int>> r;
		std::vector<std::vector<int>> vs(argc);
		return (int)(r.add_all(argv[0], vs) + count(argc));
	}
	EOF
	g++ -O1 -g -o prog prog.cc &&
	nm -C prog >syms &&
	grep -q "inventory::detail::registry<.*>::add_all(" syms
'

# mangled NAME-PART: the mangled symbol of the function whose name has NAME-PART
mangled() {
	nm prog | awk -v p="$1" '$2 ~ /^[TtWw]$/ && index($3, p) && !f { print $3; f = 1 }'
}
off() { vaddr_to_off prog "$(sym_vaddr prog "$(mangled "$1")")"; }

test_expect_success 'a database with samples in add_all, count and main' '
	ADD=$(off 7add_all) && CNT=$(off 5count) && MAIN=$(off main) &&
	test -n "$ADD" && test -n "$CNT" && test -n "$MAIN" &&
	{
		echo "epoch label=one"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image p path=$TEST_DIR/prog buildid=$(build_id prog)"
		echo "profile p cycles"
		echo "0x$ADD 500"
		echo "0x$CNT 300"
		echo "0x$MAIN 200"
		echo "epoch label=two"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image p path=$TEST_DIR/prog buildid=$(build_id prog)"
		echo "profile p cycles"
		echo "0x$ADD 900"
		echo "0x$CNT 300"
		echo "0x$MAIN 200"
	} >db.txt &&
	dcpi-test-helper build db db.txt >/dev/null
'

# image_columns FILE: the columns where the rows' image paths start, each once
# (the ellipsis counted as the one column it takes).
image_columns() {
	grep "$TEST_DIR/prog\$" "$1" | sed 's/\xe2\x80\xa6/~/g' |
		awk -v p="$TEST_DIR/prog" '{ print index($0, p) }' | sort -u
}

test_expect_success 'dcpiprof: the images in line, the long name cut in the middle' '
	dcpiprof -d db -E one >out &&
	test "$(grep -c "$TEST_DIR/prog\$" out)" = 3 &&
	test "$(image_columns out | wc -l)" = 1 &&
	full=$(sed -n "s/^[0-9a-f]* [TtWw] \(inventory::detail::registry<.*add_all(.*)\)\$/\1/p" syms | sed -n 1p) &&
	test ${#full} -gt 40 &&
	line=$(grep "inventory::detail::" out) &&
	name=$(printf "%s\n" "$line" | sed "s/^.*%  *//; s/  *\/.*\$//" | sed "s/\xe2\x80\xa6/~/") &&
	test ${#name} = 40 &&
	head=${name%%\~*} && tail=${name#*\~} &&
	test "$head" != "$name" &&
	test "${full#"$head"}" != "$full" &&
	test "${full%"$tail"}" != "$full" &&
	test ${#tail} -ge ${#head}
'

test_expect_success 'dcpidiff: the images in line too' '
	dcpidiff -d db one two >out &&
	test "$(grep -c "$TEST_DIR/prog\$" out)" = 3 &&
	test "$(image_columns out | wc -l)" = 1 &&
	grep -q "inventory::detail::…" out
'

test_expect_success 'dcpi-tui at 80 columns: names sized by content, images in line' '
	printf "%s\n" "P" ":save-display procs.screen" >script &&
	TERM=xterm-256color LINES=12 COLUMNS=80 LC_ALL=C.UTF-8 dcpi-tui --script script -E one db \
		2>err && test ! -s err &&
	rows=$(grep -c " prog *\$" procs.screen) && test "$rows" = 3 &&
	test "$(grep " prog *\$" procs.screen | sed "s/\xe2\x80\xa6/~/g" |
		awk "{ print index(\$0, \" prog\") }" | sort -u | wc -l)" = 1 &&
	grep "inventory::" procs.screen | grep -q "inventory::.*….*const&) *prog" &&
	grep -q " count(int) " procs.screen
'

test_done
