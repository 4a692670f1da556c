#!/bin/sh
# stap's functions over kernel structures that Debian's examples call
# (tcp_connections, tcp_retransmission, rlimit_nofile, pfiles, psig) and
# stap's netdev.* aliases, at -p2 against the kernel's BTF: each with
# stap's signature, the examples elaborating with their .meta command
# lines; the pure ones evaluated.  kexamples.t runs them in the kernel.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
use_kernel_btf
plan 16
# shellcheck disable=SC2086
mt() { "$MT" $R "$@" 2>&1; }

# every function, called from a kernel probe: -p2 lists it with its signature
out=$(mt -p2 -e 'probe kernel.function("tcp_retransmit_skb") {
  printf("%d %s %d %d %d %d %d %d %s %d %d\n", inet_get_local_port($sk), inet_get_ip_source($sk),
    tcp_get_info_rto($sk), tcp_get_info_snd_cwnd($sk), tcp_ts_get_info_snd_ssthresh($sk),
    tcp_ts_get_info_rcv_mss($sk), tcp_ts_get_info_state($sk), __ip_sock_family($sk),
    format_ipaddr(__ip_sock_saddr($sk), __ip_sock_family($sk)) . format_ipaddr(__ip_sock_daddr($sk), 2),
    __tcp_sock_sport($sk), __tcp_sock_dport($sk))
  printf("%s %s %d %d %d %d %d\n", tcp_sockstate_str(1), _sys_open_flag_str(0), get_sa_handler($sk),
    get_sa_flags($sk), get_sigaction_mask($sk), task_rlimit_nofile($sk), task_rlimit($sk, "RLIMIT_NOFILE")) }')
for sig in 'inet_get_local_port:long (sock:long)' 'inet_get_ip_source:string (sock:long)' \
	   'tcp_get_info_rto:long (sock:long)' 'tcp_ts_get_info_state:long (sock:long)' \
	   'tcp_sockstate_str:string (state:long)' '__ip_sock_saddr:long (sock:long)' \
	   '_sys_open_flag_str:string (f:long)' 'get_sa_handler:long (act:long)' \
	   'get_sigaction_mask:long (act:long)' 'task_rlimit_nofile:long (task:long)' \
	   'task_rlimit:long (task:long, lim_str:string)'; do
	printf '%s\n' "$out" | grep -qxF "$sig"; ok $? "stap's signature: $sig"
done

# Debian's examples that stand on them elaborate, with their .meta lines
ex=/usr/share/systemtap/examples
if [ -d "$ex" ]; then
	fails=
	for s in network/tcp_connections network/tcp_retransmission process/rlimit_nofile network/netdev; do
		mt -p2 "$ex/$s.stp" >/dev/null || fails="$fails $s"
	done
	is "$fails" "" "tcp_connections, tcp_retransmission, rlimit_nofile, netdev.stp elaborate"
	like "$(mt -g -p2 "$ex/process/pfiles.stp" -x 1)" "embedded C code cannot run in marktap" \
		"pfiles.stp: what stops it now is its own embedded C"
else
	skip 2 "no systemtap-doc examples"
fi

# the pure ones, evaluated (stap's output)
is "$("$MT" -e 'probe begin { printf("%s|%s|%s|%s|%s", _sys_open_flag_str(0), _sys_open_flag_str(0x241), _sys_open_flag_str(0x8802), _sys_open_flag_str(0x1000), _sys_open_flag_str(0x400003)); exit() }' 2>&1)" \
	"O_RDONLY|O_WRONLY|O_CREAT|O_TRUNC|O_RDWR|O_NONBLOCK|O_LARGEFILE|O_RDONLY|O_SYNC|O_RDONLY|0x400000" \
	"_sys_open_flag_str: access mode, flags, O_DSYNC read as O_SYNC (stap's), the rest in hex"
is "$("$MT" -e 'probe begin { printf("%s|%s|%s", tcp_sockstate_str(1), tcp_sockstate_str(10), tcp_sockstate_str(13)); exit() }' 2>&1)" \
	"TCP_ESTABLISHED|TCP_LISTEN|UNDEF" "tcp_sockstate_str"
is "$(sh -c 'ulimit -n 123; exec "$0" -e "probe begin { printf(\"%d %d %d\", task_rlimit_nofile(pid()), task_rlimit(pid(), \"RLIMIT_NOFILE\"), task_rlimit(pid(), \"RLIMIT_NONE\")); exit() }"' "$MT" 2>&1)" \
	"123 123 -1" "task_rlimit_nofile and task_rlimit of marktap itself (/proc), -1 for a name unknown"
