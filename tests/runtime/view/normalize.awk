# normalize.awk - turn babeltrace2 text (mode=bt) or marktrace view text
# (mode=mt, --no-delta) into one comparable record per event:
#   TIME NAME cpu=C pid=P tid=T procname="..." field=value ...
# Values are compared, not their spelling: hex in lower case, chars as
# their code, octal without leading zeros, floats to 6 significant digits.
BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }

# next_pair(): the next key=value of rest into key and val; 0 at the end
function next_pair(   c, q) {
	while (rest != "" && index(" ,{}", substr(rest, 1, 1))) rest = substr(rest, 2)
	if (rest == "") return 0
	key = ""
	while (rest != "" && (c = substr(rest, 1, 1)) != " " && c != "=") { key = key c; rest = substr(rest, 2) }
	while (rest != "" && index(" =", substr(rest, 1, 1))) rest = substr(rest, 2)
	c = substr(rest, 1, 1)
	if (c == "\"" || c == "'") {
		q = c; val = c; rest = substr(rest, 2)
		while (rest != "" && (c = substr(rest, 1, 1)) != q) {
			if (c == "\\") { val = val c; rest = substr(rest, 2); c = substr(rest, 1, 1) }
			val = val c; rest = substr(rest, 2)
		}
		val = val q; rest = substr(rest, 2)
	} else {
		val = ""
		while (rest != "" && index(" ,}", (c = substr(rest, 1, 1))) == 0) { val = val c; rest = substr(rest, 2) }
	}
	return 1
}

function norm(k, v) {
	if (v ~ /^'.'$/) return ord[substr(v, 2, 1)]
	if (v ~ /^0[xX]/) return tolower(v)
	if (k == "o") { sub(/^0+/, "", v); return v }
	if (v ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ && v ~ /[.eE]/) return sprintf("%.5e", v)
	return v
}

function emit(   out) {
	out = time " " name " cpu=" cpu " pid=" pid " tid=" tid " procname=" procname
	while (next_pair()) {
		if (key == "cpu_id" || key == "pid" || key == "tid" || key == "procname") continue
		out = out " " key "=" norm(key, val)
	}
	print out
}

mode == "bt" && /^\[/ {
	time = $1
	# [t] (+d) host NAME: { cpu_id = C }, { pid = P, tid = T, procname = "x" }, { ... }
	name = $4; sub(/:$/, "", name)
	rest = $0; sub(/^[^{]*/, "", rest)
	save = rest
	pid = tid = procname = ""
	if (name == "marktap_statedump:thread") {
		# a compact marktap trace (runtime/core/mt_event.h): pid and name
		# of the tid in its context, for its later events; not an event
		# marktrace view shows
		while (next_pair()) {
			if (key == "tid") tid = val
			else if (key == "pid") pid = val
			else if (key == "name") procname = val
		}
		thread_pid[tid] = pid; thread_name[tid] = procname
		next
	}
	while (next_pair()) {
		if (key == "cpu_id") cpu = val
		else if (key == "pid") pid = val
		else if (key == "tid") tid = val
		else if (key == "procname") { procname = val; break }
	}
	if (pid == "" && procname == "" && (tid in thread_pid)) {
		pid = thread_pid[tid]; procname = thread_name[tid]
	}
	if (pid == "") pid = -1
	if (procname == "") procname = "\"\""
	rest = save
	emit()
}

mode == "mt" && /^\[/ && $2 !~ /^lost$/ {
	time = $1
	cpu = substr($2, 4)
	# PROCNAME[PID/TID] NAME: k=v ...
	rest = $0; sub(/^[^ ]* [^ ]* /, "", rest)
	match(rest, /\[-?[0-9]+\/-?[0-9]+\] /)
	procname = "\"" substr(rest, 1, RSTART - 1) "\""
	split(substr(rest, RSTART + 1, RLENGTH - 3), ids, "/")
	pid = ids[1]; tid = ids[2]
	rest = substr(rest, RSTART + RLENGTH)
	name = rest; sub(/ .*/, "", name); sub(/:$/, "", name); sub(/^[^ ]*/, "", rest)
	if (name == "marktap_statedump:thread") next   # view --statedump's; bt's are folded
	emit()
}
