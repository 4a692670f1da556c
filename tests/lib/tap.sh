# tap.sh - TAP helpers for shell tests; source it.
# Tests run from make check (top_builddir set) or from prove in the build tree.
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
export top_builddir top_srcdir
_tap_n=0
_tap_fail=0
plan() { echo "1..$1"; }
ok() { # ok COND-STATUS DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then echo "ok $_tap_n - $2"; else echo "not ok $_tap_n - $2"; _tap_fail=$((_tap_fail + 1)); fi
}
is() { # is GOT EXPECTED DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"; fi
}
like() { # like GOT REGEX DESCRIPTION
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; printf '#   got: %s\n#   not matching: %s\n' "$1" "$2"; fi
}
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
diag() { echo "# $*"; }
done_testing() { [ "$_tap_fail" = 0 ]; exit $?; }
skip() { # skip COUNT REASON
	_tap_k=$1; shift
	while [ "$_tap_k" -gt 0 ]; do ok 0 "# SKIP $*"; _tap_k=$((_tap_k - 1)); done
}
# bail_out MESSAGE: the test cannot go on (TAP's "Bail out!"), exit 1
bail_out() { echo "Bail out! $*"; exit 1; }
# own_copy PROGRAM: this test's own copy of PROGRAM (its path).  Probes on
# process("PATH") reach every process running PATH, as stap's do: two
# tests run at once (make -j2 check) must not probe the same file.
own_copy() {
	_own=${top_builddir:-.}/tests/own/$(basename "$0" .t)
	mkdir -p "$_own" && cp -f "$1" "$_own/" && chmod 755 "$_own" && echo "$_own/$(basename "$1")"
}
# For tests that cross a user boundary as nobody: skip unless root with
# setpriv and Debian's python3 (PY); nobody CMD... runs CMD as uid and gid
# 65534 without groups; TMP (0755, removed at exit) and PIDS (killed at
# exit) are set.
as_nobody_setup() {
	PY=/usr/bin/python3
	[ "$(id -u)" = 0 ] || skip_all "needs root (to cross to another user, nobody)"
	command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
	[ -x "$PY" ] || skip_all "no /usr/bin/python3"
	TMP=$(mktemp -d)
	chmod 755 "$TMP"
	PIDS=
	trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT
}
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# on_tty CMD...: run CMD with its stdout and stderr on a pseudo-terminal
# (python3's pty); what the terminal got, newlines as "\n", on our stdout
on_tty() {
	/usr/bin/python3 - "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
sys.stdout.buffer.write(out.replace(b"\r\n", b"\n"))
PY
}
# wait_for SECONDS COMMAND...: run COMMAND every 50 ms until it succeeds;
# status 0 as soon as it does, 1 once SECONDS (whole or decimal) have
# passed without it.  The deadline is a bound for a loaded machine, not a
# pace.  At the deadline a diag line names what was awaited, and
# wait_for_what holds it for a test that reports it its own way:
#   wait_for 10 grep -q ready "$W/out"
#   wait_for 10 file_has_lines "$W/log" 3 || ...
wait_for() {
	_wf_limit=$1; shift
	_wf_end=$(( $(date +%s%N) / 1000000 + $(awk -v s="$_wf_limit" 'BEGIN { print int(s * 1000) }') ))
	wait_for_what=
	while ! "$@"; do
		if [ $(( $(date +%s%N) / 1000000 )) -ge "$_wf_end" ]; then
			wait_for_what="gave up after $_wf_limit s waiting for: $*"
			diag "$wait_for_what"
			return 1
		fi
		sleep 0.05
	done
	return 0
}
# Conditions for wait_for (and for tests of their own):
file_has_lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }   # FILE N
file_has_bytes() { [ "$(cat "$1" 2>/dev/null | wc -c)" -ge "$2" ]; }   # FILE N
# exited PID: the process has ended (a child not yet reaped, a zombie, too)
exited() {
	! kill -0 "$1" 2>/dev/null || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]
}
# tcp_listening PORT: a socket listens on PORT (IPv4 or IPv6)
tcp_listening() {
	grep -qE "^ *[0-9]+: [0-9A-F]+:$(printf %04X "$1") [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# unix_bound NAME: an abstract unix socket @NAME is bound
unix_bound() { awk -v n="@$1" '$8 == n { f = 1 } END { exit !f }' /proc/net/unix; }
