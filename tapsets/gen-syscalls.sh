#!/bin/sh
# gen-syscalls.sh - write tapsets/syscalls.stp: the x86_64 system call
# table (syscall_name()) and one syscall.NAME / nd_syscall.NAME alias per
# call over kernel_arch_syscall_entry, from the kernel's asm/unistd_64.h.
#
#   gen-syscalls.sh [HEADER [SYSCALLS_H]] > syscalls.stp
#
# Without HEADER: the packaged kernel headers' generated uapi header
# (linux-headers-amd64), else linux-libc-dev's copy.  The calls that fs.stp
# defines over the fs_* markers (with their arguments) are left out here.
# SYSCALLS_H (the kernel's include/linux/syscalls.h, in Debian's
# linux-headers-*-common) gives each call's parameters, by name: the
# aliases set them from the registers saved at the call's entry.
set -eu

header=${1:-}
protos=${2:-}
if [ -z "$header" ]; then
	kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -E 's/^linux-headers-([^ ,]+).*/\1/')
	for h in ${kver:+/usr/src/linux-headers-$kver/arch/x86/include/generated/uapi/asm/unistd_64.h} \
		 /usr/src/linux-headers-*-amd64/arch/x86/include/generated/uapi/asm/unistd_64.h \
		 /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h; do
		[ -r "$h" ] && { header=$h; break; }
	done
fi
if [ -z "$header" ]; then
	echo "gen-syscalls.sh: no asm/unistd_64.h found (install linux-libc-dev or pass its path)" >&2
	exit 1
elif [ ! -r "$header" ]; then
	echo "gen-syscalls.sh: cannot read $header" >&2
	exit 1
fi

if [ -z "$protos" ]; then
	case $header in
	/usr/src/linux-headers-*-amd64/*)
		d=${header#/usr/src/linux-headers-}; d=${d%%-amd64/*}
		protos=/usr/src/linux-headers-$d-common/include/linux/syscalls.h ;;
	esac
	[ -r "$protos" ] || protos=$(ls /usr/src/linux-headers-*-common/include/linux/syscalls.h 2>/dev/null | tail -n 1)
fi
[ -n "$protos" ] && [ -r "$protos" ] || protos=/dev/null

# "nr name" lines, sorted by number; a header without them is an error
table=$(sed -n 's/^#define __NR_\([a-z0-9_]*\)[ 	]\{1,\}\([0-9]\{1,\}\)[ 	]*$/\2 \1/p' "$header" | sort -n)
if [ "$(printf '%s\n' "$table" | grep -c .)" -lt 300 ]; then
	echo "gen-syscalls.sh: $header has no x86_64 system call table" >&2
	exit 1
fi

cat <<HEAD
// syscalls.stp - x86_64 system calls by number.  GENERATED at build time
// by tapsets/gen-syscalls.sh from $header
// and $protos: do not edit.
//
// syscall.NAME fires at the entry of system call NAME (raw_syscalls:
// sys_enter) with stap's name.  The kernel_arch_syscall_entry marker
// carries the number and the caller's ip only; the call's arguments, by
// the names the kernel's declaration gives them, come from the registers
// saved at the entry (__marktap_syscall_arg, x86_64.stp), which handlers
// in marktap.ko read: a string argument as stap's user_string_quoted and
// NAME_uaddr, another pointer as NAME_uaddr, and argstr with numbers where
// stap decodes flags (fs.stp gives the calls the fs_* markers describe).
// syscall.NAME.return fires when call NAME returns (raw_syscalls:
// sys_exit): the exit marker carries the return
// value only, so the alias also probes the entry marker, where it notes
// which call the thread entered (x86_64.stp), and matches at the exit.
// marktap makes the aliases that syscall.* resolves to one handler on the
// marker, a binary search on the number (translator/elab_probe.c,
// tr_elab_merge_selected).

// syscall_name - the name of x86_64 system call NR ("read"), as stap's.
function syscall_name:string (nr:long) %{
	local names = __marktap_syscall_names
	if not names then
		names = {}
HEAD
printf '%s\n' "$table" | awk '{ printf "\t\tnames[%d] = \"%s\"\n", $1, $2 }'
cat <<'MID'
		__marktap_syscall_names = names
	end
	return names[nr] or ("syscall_" .. nr)
%}

MID
# "name|parameters" of each sys_NAME the kernel declares, on one line
# each; a name declared twice (under different #ifdefs) is left out
awk '
/^asmlinkage long sys_[a-z0-9_]*\(/ {
	buf = $0
	while (buf !~ /\);/ && (getline line) > 0) buf = buf " " line
	gsub(/[ \t]+/, " ", buf)
	sub(/^asmlinkage long sys_/, "", buf); sub(/\);.*/, "", buf)
	name = buf; sub(/\(.*/, "", name)
	params = buf; sub(/^[a-z0-9_]*\(/, "", params)
	if (name in seen) dup[name] = 1
	seen[name] = params
}
END { for (n in seen) if (!(n in dup)) print n "|" seen[n] }' "$protos" > "${TMPDIR:-/tmp}/gen-syscalls.$$"
trap 'rm -f "${TMPDIR:-/tmp}/gen-syscalls.$$"' EXIT

stapnames=$(dirname "$0")/syscall-names.tsv
[ -r "$stapnames" ] || stapnames=/dev/null
printf '%s\n' "$table" | awk -v protos="${TMPDIR:-/tmp}/gen-syscalls.$$" -v stapnames="$stapnames" '
BEGIN {
	while ((getline line < protos) > 0) {
		i = index(line, "|")
		proto[substr(line, 1, i - 1)] = substr(line, i + 1)
	}
	# the names stap gives the arguments (syscall-names.tsv): call pos name kind
	while ((getline line < stapnames) > 0) {
		if (line ~ /^#/ || split(line, f, "\t") != 4)
			continue
		k = ++stn[f[1]]
		stpos[f[1], k] = f[2]; stname[f[1], k] = f[3]; stkind[f[1], k] = f[4]
		stapvar[f[1], f[3]] = 1
		# the variable argstr shows for a position: a string first
		if (!((f[1], f[2]) in stposvar) || f[4] == "str") {
			stposvar[f[1], f[2]] = f[3]; stposkind[f[1], f[2]] = f[4]
		}
		stapclass[f[3]] = stapclass[f[3]] (f[4] ~ /str$/ ? "s" : "n")
	}
	# where the x86_64 table enters under another name
	alias["stat"] = "newstat"; alias["lstat"] = "newlstat"; alias["fstat"] = "newfstat"
	alias["uname"] = "newuname"; alias["umount2"] = "umount"; alias["sendfile"] = "sendfile64"
	split("int pid_t key_serial_t clockid_t mqd_t timer_t rwf_t key_t s32 __s32", t, " ")
	for (k in t) s32[t[k]] = 1
	split("unsigned|unsigned int|u32|__u32|uid_t|gid_t|qid_t|umode_t|old_uid_t|old_gid_t", t, "|")
	for (k in t) u32[t[k]] = 1
	split("name argstr retval retstr syscall_nr if else for foreach in limit return delete while break continue next string long global probe function private try catch", t, " ")
	for (k in t) reserved[t[k]] = 1
	nounavail = "kernel_arch_syscall_entry carries the system call number only"
	split("", numname)
	# calls whose declarations leave their parameters unnamed, named as
	# the kernel definitions name them
	proto["socket"] = "int family, int type, int protocol"
	proto["socketpair"] = "int family, int type, int protocol, int __user *usockvec"
	proto["bind"] = "int fd, struct sockaddr __user *umyaddr, int addrlen"
	proto["connect"] = "int fd, struct sockaddr __user *uservaddr, int addrlen"
	proto["listen"] = "int fd, int backlog"
	proto["accept"] = "int fd, struct sockaddr __user *upeer_sockaddr, int __user *upeer_addrlen"
	proto["accept4"] = "int fd, struct sockaddr __user *upeer_sockaddr, int __user *upeer_addrlen, int flags"
	proto["getsockname"] = "int fd, struct sockaddr __user *usockaddr, int __user *usockaddr_len"
	proto["getpeername"] = "int fd, struct sockaddr __user *usockaddr, int __user *usockaddr_len"
	proto["sendto"] = "int fd, void __user *buff, size_t len, unsigned int flags, struct sockaddr __user *addr, int addr_len"
	proto["recvfrom"] = "int fd, void __user *ubuf, size_t size, unsigned int flags, struct sockaddr __user *addr, int __user *addr_len"
	proto["shutdown"] = "int fd, int how"
	proto["mmap"] = "unsigned long addr, unsigned long len, unsigned long prot, unsigned long flags, unsigned long fd, unsigned long off"
	proto["rt_sigaction"] = "int sig, const struct sigaction __user *act, struct sigaction __user *oact, size_t sigsetsize"
	proto["arch_prctl"] = "int option, unsigned long arg2"
	proto["io_submit"] = "aio_context_t ctx_id, long nr, struct iocb __user * __user *iocbpp"
	# the calls given a struct sockaddr and its length (positions): argstr
	# shows it as stap does (inet.stp), connect and bind give its parts
	# as stap names them (uaddr_*) too
	sockaddr["connect"] = "2 3"; sockaddr["bind"] = "2 3"; sockaddr["sendto"] = "5 6"
	uaddr_vars["connect"] = 1; uaddr_vars["bind"] = 1
	# syscall.* runs the aliases as one handler, where a name has one type:
	# a name that is a number in some call is not a string in another
	# (there it is NAME_str, and NAME_uaddr)
	for (c in proto)
		if (params(c))
			for (i = 1; i <= np; i++)
				if (pkind[i] != "str" && pkind[i] != "ptr")
					numname[pname[i]] = 1
}
# The parameters of call $2: np, pname[], pkind[] (str, ptr, s32, u32,
# long); 0 when the kernel header does not name them all
function params(call,    p, n, i, a, ty, nm) {
	np = 0
	p = (call in alias && alias[call] in proto) ? proto[alias[call]] : (call in proto ? proto[call] : "")
	if (p == "" && !(call in proto))
		return 0
	if (p == "void")
		return 1
	n = split(p, a, ",")
	for (i = 1; i <= n; i++) {
		gsub(/^ +| +$/, "", a[i])
		gsub(/ *\* */, " * ", a[i]); gsub(/ +$/, "", a[i])
		if (!match(a[i], /[A-Za-z_][A-Za-z0-9_]*$/))
			return 0
		nm = substr(a[i], RSTART)
		ty = substr(a[i], 1, RSTART - 1); gsub(/^ +| +$/, "", ty)
		if (ty == "" || ty ~ /\*$/ && nm == "")
			return 0   # an unnamed parameter
		np++
		pname[np] = nm
		if (ty ~ /^(const )?char __user \*$/)
			pkind[np] = "str"
		else if (ty ~ /\*/)
			pkind[np] = "ptr"
		else if (ty in s32)
			pkind[np] = "s32"
		else if (ty in u32)
			pkind[np] = "u32"
		else
			pkind[np] = "long"
	}
	return np <= 6
}
$2 ~ /^(read|write|pread64|pwrite64|readv|writev|close|lseek|ioctl)$/ { next }
{
	printf "probe syscall.%s = kernel.mark(\"kernel_arch_syscall_entry\")\n{\n", $2
	printf "\tif ($syscall_id != %d) next\n\tname = \"%s\"\n", $1, $2
	if (!params($2)) {
		printf "\t__marktap_syscall_params(\"\")\n"
		printf "\targstr = __marktap_unavailable(\"%s\")\n", nounavail
		printf "\t__marktap_others = __marktap_unavailable(\"%s\")\n}\n", nounavail
		printf "probe nd_syscall.%s = syscall.%s { }\n", $2, $2
		next
	}
	# the parameters by the kernel names, read (and written with -g)
	# as $NAME (translator/elab_bind.c)
	decl = ""
	for (i = 1; i <= np; i++)
		decl = decl (i > 1 ? " " : "") pname[i] ":" (pkind[i] ~ /^[su]32$/ ? pkind[i] : "long")
	printf "\t__marktap_syscall_params(\"%s\")\n", decl
	fmt = ""; vals = ""; names = ""
	sa_pos = 0
	if ($2 in sockaddr) {
		split(sockaddr[$2], sa, " ")
		sa_pos = sa[1]
		sa_get = "__marktap_syscall_arg(" (sa[1] - 1) "), __marktap_syscall_uint(" (sa[2] - 1) ")"
	}
	if ($2 in uaddr_vars) {
		printf "\tuaddr_af = _struct_sockaddr_u_sa_family(%s)\n", sa_get
		printf "\tuaddr_ip = _struct_sockaddr_u_ip_addr(%s)\n", sa_get
		printf "\tuaddr_ip_port = _struct_sockaddr_u_tcp_port(%s)\n", sa_get
		printf "\tuaddr_ipv6_flowinfo = _struct_sockaddr_u_ipv6_flowinfo(%s)\n", sa_get
		printf "\tuaddr_ipv6_scope_id = _struct_sockaddr_u_ipv6_scope_id(%s)\n", sa_get
		names = names " uaddr_af uaddr_ip uaddr_ip_port uaddr_ipv6_flowinfo uaddr_ipv6_scope_id"
	}
	for (i = 1; i <= np; i++) {
		a = i - 1
		n = pname[i]; k = pkind[i]
		get = k == "s32" ? "__marktap_syscall_int(" a ")" : \
		      k == "u32" ? "__marktap_syscall_uint(" a ")" : "__marktap_syscall_arg(" a ")"
		if (n in reserved) {
			v = get; if (k == "str") k = "ptr"
		} else if (($2, n) in stapvar || ($2, n "_uaddr") in stapvar ||
			   (k != "str" && k != "ptr" && stapclass[n] ~ /s/)) {
			if (k == "str" && !(($2, n "_uaddr") in stapvar) && !(n "_uaddr" in reserved)) {
				printf "\t%s_uaddr = %s\n", n, get   # its address too
				names = names " " n "_uaddr"
			}
			v = get; if (k == "str") k = "ptr"   # stap gives its own n, below
			if (($2, i) in stposvar) {   # argstr shows stap variable
				v = stposvar[$2, i]
				k = stposkind[$2, i] ~ /str$/ ? "str" : stposkind[$2, i] == "ptr" ? "ptr" : k
			}
		} else if (k == "str") {
			s = (n in numname || stapclass[n] ~ /n/) ? n "_str" : n
			printf "\t%s_uaddr = %s\n\t%s = user_string_quoted(%s_uaddr)\n", n, get, s, n
			v = s; names = names " " s " " n "_uaddr"
		} else if (k == "ptr") {
			printf "\t%s_uaddr = %s\n", n, get
			v = n "_uaddr"; names = names " " n "_uaddr"
		} else {
			printf "\t%s = %s\n", n, get
			v = n; names = names " " n
		}
		if (i == sa_pos) {   # the address as stap shows it
			v = "_struct_sockaddr_u(" sa_get ")"; k = "str"
		}
		fmt = fmt (i > 1 ? ", " : "") (k == "str" ? "%s" : k == "ptr" ? "%p" : "%d")
		vals = vals ", " v
	}
	for (j = 1; j <= stn[$2]; j++) {   # the names stap gives, beside the kernel ones
		a = stpos[$2, j] - 1; k = stkind[$2, j]; n = stname[$2, j]
		get = k == "int" ? "__marktap_syscall_int(" a ")" : k == "uint" ? "__marktap_syscall_uint(" a ")" : \
		      "__marktap_syscall_arg(" a ")"
		if (k == "str")
			get = "user_string_quoted(" get ")"
		else if (k == "ustr")
			get = "user_string(" get ", \"\")"
		printf "\t%s = %s\n", n, get
		names = names " " n
	}
	if (np)
		printf "\targstr = sprintf(\"%s\"%s)\n", fmt, vals
	else
		printf "\targstr = \"\"\n"
	if (np)
		printf "\t__marktap_others = __marktap_unavailable(\"marktap gives this call\x27s arguments by stap\x27s names and the kernel\x27s (%s) and argstr\")\n}\n", substr(names, 2)
	else
		printf "\t__marktap_others = __marktap_unavailable(\"the call has no arguments\")\n}\n"
	printf "probe nd_syscall.%s = syscall.%s { }\n", $2, $2
}'
printf '%s\n' "$table" | awk '
{
	printf "probe syscall.%s.return = kernel.mark(\"kernel_arch_syscall_entry\"), kernel.mark(\"kernel_arch_syscall_exit\")\n{\n", $2
	printf "\tif (__marktap_syscall_select(@defined($syscall_id) ? $syscall_id : -1) != %d) next\n", $1
	printf "\tif (@defined($syscall_id)) { __marktap_entry(); next }\n\tname = \"%s\"\n", $2
	printf "\tretval = @defined($ret) ? $ret : 0\n\tretstr = __marktap_syscall_retstr(retval)\n"
	printf "\t__marktap_others = __marktap_unavailable(\"kernel_arch_syscall_exit carries the return value only\")\n}\n"
	printf "probe nd_syscall.%s.return = syscall.%s.return { }\n", $2, $2
}'
