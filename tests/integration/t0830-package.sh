#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package, built and installed on this machine as an
# administrator would: dpkg-buildpackage -us -uc -b from a copy of the tree,
# lintian (nothing beyond debian/dcpi.lintian-overrides), apt install (tools,
# daemon, man pages, unit, group, settings, completion), the service started
# by systemd where systemd runs, else its ExecStart= run as systemd would
# (its Group=, UMask=, StateDirectory=, RuntimeDirectory=); members of the
# group dcpi read the profiles and use dcpictl, others cannot; apt remove
# keeps /var/lib/dcpi, apt purge removes it.
#
# It changes the machine (a package, a group, /var/lib/dcpi, /run/dcpi) and
# puts it back; it refuses to touch a dcpi package that was installed before.
# The build takes minutes: the body's time limit is raised.
DCPI_TEST_TIMEOUT=${DCPI_TEST_TIMEOUT:-1800}
. "$top_srcdir/tests/lib.sh"
require_root
for t in dpkg-buildpackage dh apt-get setpriv; do
	command -v $t >/dev/null || skip_all "$t is not installed (apt-get install dpkg-dev debhelper apt util-linux)"
done
[ -d "$top_srcdir/debian" ] || skip_all "no debian/ directory in $top_srcdir"

UNIT=/lib/systemd/system/dcpid.service
SOCK=/run/dcpi/dcpid.sock

# One package test at a time on a machine (other checkouts run it too).
exec 9>/run/lock/dcpi-package-test.lock
flock -w 1500 9 || skip_all "another dcpi package test held /run/lock/dcpi-package-test.lock for 25 minutes"
if dpkg-query -W -f='${Status}' dcpi 2>/dev/null | grep -q "ok installed\|config-files"; then
	skip_all "a dcpi package is installed on this machine; this test does not replace it"
fi
[ -e /var/lib/dcpi ] && skip_all "/var/lib/dcpi exists already; this test does not touch it"
getent group dcpi >/dev/null && had_group=1 || had_group=0
getent passwd dcpi-worker >/dev/null && had_worker=1 || had_worker=0

# Puts the machine back whatever happened.
package_cleanup() {
	[ -f "$TEST_DIR/unit.pid" ] && kill -9 "$(cat "$TEST_DIR/unit.pid")" 2>/dev/null
	if [ -d /run/systemd/system ]; then systemctl stop dcpid >/dev/null 2>&1; fi
	if dpkg-query -W -f='${Status}' dcpi 2>/dev/null | grep -q "installed\|config-files"; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o DPkg::Lock::Timeout=300 dcpi >/dev/null 2>&1
	fi
	rm -rf /var/lib/dcpi /run/dcpi
	[ $had_worker = 0 ] && getent passwd dcpi-worker >/dev/null && userdel dcpi-worker
	[ $had_group = 0 ] && getent group dcpi >/dev/null && groupdel dcpi
}
test_at_end package_cleanup

apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 "$@"
}
gid() { getent group dcpi | cut -d: -f3; }
# Other users run the installed tools (/usr/bin first on PATH): the build
# tree may be in a private clone (/root is 0700), and the package is what is tested.
as_member() { PATH=/usr/bin:/usr/sbin:$PATH setpriv --reuid=65534 --regid=65534 --groups="$(gid)" -- "$@"; }
as_nobody() { PATH=/usr/bin:/usr/sbin:$PATH setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

test_expect_success 'dpkg-buildpackage -us -uc -b builds the package' '
	mkdir src &&
	if git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top_srcdir" ls-files --cached --others --exclude-standard |
			tar -C "$top_srcdir" -cf - -T - | tar -C src -xf -
	else
		tar -C "$top_srcdir" --exclude=./_build --exclude="./_build-*" \
			--exclude=./debian/build --exclude=./debian/dcpi -cf - . | tar -C src -xf - &&
		{ ! test -f src/config.status || make -C src distclean >/dev/null; }
	fi &&
	(cd src && dpkg-checkbuilddeps) &&
	t0=$(date +%s) &&
	(cd src && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" nice -n 19 \
		dpkg-buildpackage -us -uc -b >../build.log 2>&1) ||
		{ tail -n 30 build.log; exit 1; }
	echo "built in $(( $(date +%s) - t0 )) s:" && ls *.deb &&
	test -f dcpi_*_amd64.deb
'

if command -v lintian >/dev/null; then
	test_expect_success 'lintian: no error or warning' '
		lintian --pedantic --info --fail-on error,warning dcpi_*.changes >lintian.out 2>&1
		rc=$?
		cat lintian.out
		test $rc = 0
	'
else
	test_skip 'lintian: no error or warning' "lintian is not installed"
fi

test_expect_success 'apt installs the tools, the daemon, the unit, the group and the settings' '
	apt_get install ./dcpi_*_amd64.deb >install.out 2>&1 || { cat install.out; exit 1; }
	for c in dcpiprof dcpilist dcpicalc dcpistats dcpidiff dcpidb dcpirun dcpictl dcpi-tui; do
		test -x /usr/bin/$c || { echo "no /usr/bin/$c"; exit 1; }
	done &&
	test -x /usr/sbin/dcpid && /usr/sbin/dcpid --version &&
	man -w dcpidb && man -w 8 dcpid && man -w dcpi-tui &&
	test -f $UNIT &&
	grep -x "ExecStart=/usr/sbin/dcpid --foreground --config /etc/dcpi/dcpid.conf -d /var/lib/dcpi --socket /run/dcpi/dcpid.sock --group dcpi --emulate-socket /run/dcpi-emulate.sock" $UNIT &&
	test -x /usr/libexec/dcpi/dcpi-emulate &&
	grep -x "ExecStart=/usr/libexec/dcpi/dcpi-emulate" /lib/systemd/system/dcpi-emulate@.service &&
	grep -x "ListenStream=/run/dcpi-emulate.sock" /lib/systemd/system/dcpi-emulate.socket &&
	{ ! command -v systemd-analyze >/dev/null || systemd-analyze verify $UNIT; } &&
	getent group dcpi && getent passwd dcpi-worker &&
	test "$(stat -c %U:%a /etc/dcpi/dcpid.conf)" = root:644 &&
	bash -c ". /usr/share/bash-completion/bash_completion 2>/dev/null &&
		__load_completion dcpidb && complete -p dcpidb" | grep -x "complete -F _dcpi dcpidb" &&
	systemctl is-enabled dcpid >enabled; cat enabled; grep -x disabled enabled
'

if [ -d /run/systemd/system ]; then
	test_expect_success 'systemctl start dcpid: it samples; dcpictl epoch; both epochs in dcpi-tui' '
		systemctl start dcpid &&
		for i in $(seq 100); do dcpictl status >/dev/null 2>&1 && break; sleep 0.2; done &&
		sleep 20 && dcpictl epoch second && sleep 10 && dcpictl flush &&
		printf "q\n:save-view epochs.view\nq\n" >s && chmod 644 s && chmod 777 . &&
		as_member env HOME=/tmp TERM=xterm dcpi-tui --script s /var/lib/dcpi </dev/null &&
		grep -x "title: 2 epochs" epochs.view &&
		systemctl stop dcpid
	'
else
	test_skip 'systemctl start dcpid: it samples; dcpictl epoch; both epochs in dcpi-tui' \
		"systemd is not running here (PID 1 is $(cat /proc/1/comm)): no unit can be started"
fi

# Without systemd: the unit's own command line, with what systemd would
# give it (StateDirectory=, RuntimeDirectory=, Group=, UMask=).
unit_value() { sed -n "s/^$1=//p" $UNIT; }
start_as_unit() {
	local group mode
	group=$(unit_value Group)
	install -d -m "$(unit_value StateDirectoryMode)" -g "$group" /var/lib/dcpi &&
	install -d -m "$(unit_value RuntimeDirectoryMode)" -g "$group" /run/dcpi &&
	# One process from the shell to dcpid (a backgrounded ( ) forks twice,
	# and the pid in unit.pid was not dcpid's: a failed test left it running).
	# shellcheck disable=SC2046
	bash -c 'umask "$1" && shift && exec "$@"' umask "$(unit_value UMask)" \
		setpriv --regid="$group" --clear-groups -- $(unit_value ExecStart) 2>unit.err &
	echo $! >unit.pid
	test_register_pid $! "dcpid (the unit's command)"
	for i in $(seq 150); do
		dcpictl status >/dev/null 2>&1 && return 0
		kill -0 "$(cat unit.pid)" 2>/dev/null || break
		sleep 0.2
	done
	cat unit.err
	return 1
}

if [ ! -d /run/systemd/system ] && dcpirun -q -d probe.db -e clock -- true 2>probe.err; then
	test_expect_success 'the unit'"'"'s command, run as systemd would, profiles into /var/lib/dcpi' '
		start_as_unit &&
		# a copy the members of dcpi can read (dcpiprof names its procedures)
		share_programs "$TEST_DIR/shared" wl-three && chmod 755 "$TEST_DIR" &&
		"$TEST_DIR/shared/wl-three" >/dev/null &&
		dcpictl epoch second &&
		"$TEST_DIR/shared/wl-three" >/dev/null &&
		dcpictl flush &&
		dcpictl status | head -n 3 &&
		test "$(stat -c %a:%G /var/lib/dcpi)" = 2750:dcpi &&
		test "$(stat -c %a:%G $SOCK)" = 660:dcpi &&
		find /var/lib/dcpi -type f ! -name lock -printf "%m %g %p\n" >modes &&
		! grep -v "^640 dcpi " modes &&
		test -z "$(find /var/lib/dcpi -mindepth 1 -type d -printf "%m %g %p\n" | grep -v "^2750 dcpi ")" &&
		test -d /var/lib/dcpi/000002
	'
	test_expect_success 'members of dcpi read the profiles and use dcpictl; others cannot' '
		as_member dcpictl status >st && head -n 2 st &&
		as_member dcpidb -d /var/lib/dcpi check | tail -n 1 | grep "^sound: 2 epochs" &&
		as_member dcpiprof -d /var/lib/dcpi -E 1 2>/dev/null | grep three >/dev/null &&
		printf "q\n:save-view epochs.view\nq\n" >s && chmod 644 s && chmod 777 . &&
		as_member env HOME=/tmp TERM=xterm dcpi-tui --script s /var/lib/dcpi </dev/null &&
		grep -x "title: 2 epochs" epochs.view &&
		test_must_fail as_nobody dcpictl status 2>err && grep "Permission denied" err &&
		test_must_fail as_nobody dcpiprof -d /var/lib/dcpi 2>err && grep "Permission denied" err &&
		dcpictl quit
	'
elif [ ! -d /run/systemd/system ]; then
	test_skip 'the unit'"'"'s command, run as systemd would, profiles into /var/lib/dcpi' \
		"this machine cannot sample: $(tail -n 1 probe.err)"
fi

test_expect_success 'apt remove keeps the profiles and the settings, apt purge removes them' '
	mkdir -p /var/lib/dcpi &&
	ls /var/lib/dcpi >before &&
	apt_get remove dcpi >remove.out 2>&1 || { cat remove.out; exit 1; }
	! test -e /usr/sbin/dcpid &&
	ls /var/lib/dcpi >after && test_cmp before after &&
	test -f /etc/dcpi/dcpid.conf &&
	dpkg-query -W -f="\${Status}\n" dcpi | grep "config-files" &&
	apt_get purge dcpi >purge.out 2>&1 || { cat purge.out; exit 1; }
	! test -e /var/lib/dcpi && ! test -e /etc/dcpi &&
	! dpkg-query -W -f="\${Status}\n" dcpi 2>/dev/null | grep -q installed
'

test_done
