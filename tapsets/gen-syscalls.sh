#!/bin/sh
# gen-syscalls.sh - write tapsets/syscalls.stp: the x86_64 system call
# table (syscall_name()) and one syscall.NAME / nd_syscall.NAME alias per
# call over kernel_arch_syscall_entry, from the kernel's asm/unistd_64.h.
#
#   gen-syscalls.sh [HEADER] > syscalls.stp
#
# Without HEADER: the packaged kernel headers' generated uapi header
# (linux-headers-amd64), else linux-libc-dev's copy.  The calls that fs.stp
# defines over the fs_* markers (with their arguments) are left out here.
set -eu

header=${1:-}
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

# "nr name" lines, sorted by number; a header without them is an error
table=$(sed -n 's/^#define __NR_\([a-z0-9_]*\)[ 	]\{1,\}\([0-9]\{1,\}\)[ 	]*$/\2 \1/p' "$header" | sort -n)
if [ "$(printf '%s\n' "$table" | grep -c .)" -lt 300 ]; then
	echo "gen-syscalls.sh: $header has no x86_64 system call table" >&2
	exit 1
fi

cat <<HEAD
// syscalls.stp - x86_64 system calls by number.  GENERATED at build time
// by tapsets/gen-syscalls.sh from $header: do not edit.
//
// syscall.NAME fires at the entry of system call NAME (raw_syscalls:
// sys_enter) with stap's name; the kernel_arch_syscall_entry marker
// carries the number and the caller's ip only, so argstr and the calls'
// own arguments are not available here (fs.stp gives them for the calls
// the fs_* markers describe).  syscall.NAME.return fires when call NAME
// returns (raw_syscalls:sys_exit): the exit marker carries the return
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
printf '%s\n' "$table" | awk '
$2 ~ /^(read|write|pread64|pwrite64|readv|writev|close|lseek|ioctl)$/ { next }
{
	printf "probe syscall.%s = kernel.mark(\"kernel_arch_syscall_entry\")\n{\n", $2
	printf "\tif ($syscall_id != %d) next\n\tname = \"%s\"\n", $1, $2
	printf "\targstr = __marktap_unavailable(\"kernel_arch_syscall_entry carries the system call number only\")\n"
	printf "\t__marktap_others = __marktap_unavailable(\"kernel_arch_syscall_entry carries the system call number only\")\n}\n"
	printf "probe nd_syscall.%s = syscall.%s { }\n", $2, $2
}'
printf '%s\n' "$table" | awk '
{
	printf "probe syscall.%s.return = kernel.mark(\"kernel_arch_syscall_entry\"), kernel.mark(\"kernel_arch_syscall_exit\")\n{\n", $2
	printf "\tif (@defined($syscall_id)) { __marktap_syscall_entered($syscall_id); next }\n"
	printf "\tif (__marktap_syscall_returning() != %d) next\n\tname = \"%s\"\n", $1, $2
	printf "\tretval = @defined($ret) ? $ret : 0\n\tretstr = __marktap_syscall_retstr(retval)\n"
	printf "\t__marktap_others = __marktap_unavailable(\"kernel_arch_syscall_exit carries the return value only\")\n}\n"
	printf "probe nd_syscall.%s.return = syscall.%s.return { }\n", $2, $2
}'
