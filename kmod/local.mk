# marktap.ko is built with kbuild against a kernel's headers, not by make
# all (the machine's own kernel may have none): kmod/Makefile, driven by
# the kernel tests (tests/kernel).  Here: what make dist ships, and the
# user-space side that marktrace links.
EXTRA_DIST += kmod/Makefile kmod/Kbuild kmod/gen-catalog.sh kmod/99-marktap.rules \
	kmod/mt_kmod.h kmod/mt_main.c kmod/mt_write.c kmod/mt_hooks.c \
	kmod/mt_ksym.c kmod/mt_statedump.c kmod/mt_src_syscall.c kmod/mt_src_kernel.c \
	kmod/mt_src_mm.c kmod/mt_src_net.c kmod/mt_hello.c bench/kernel/run.sh \
	kmod/mt_klua.h kmod/mt_klua_int.h kmod/mt_lua_alloc.c kmod/mt_lua_host.c kmod/mt_lua_lib.c kmod/mt_lua_nat.c kmod/mt_krt.lua \
	kmod/mt_kprobe.h kmod/mt_kprobe.c kmod/mt_kregs.h kmod/mt_kregs.c \
	kmod/mt_kstack.h kmod/mt_kstack.c kmod/mt_ktask.h kmod/mt_ktask.c kmod/mt_procfs.h kmod/mt_procfs.c \
	kmod/mt_tracepoint.h kmod/mt_tracepoint.c kmod/mt_netfilter.h kmod/mt_netfilter.c \
	kmod/mt_hwbp.h kmod/mt_hwbp.c \
	kmod/mt_dispatch.c kmod/mt_kaddr.c kmod/mt_lua_run.c kmod/mt_lua_cpu.c \
	kmod/lua/fetch-lua.sh kmod/lua/prepare-lua.sh kmod/lua/luaconf.h kmod/lua/mt_luanum.c \
	kmod/lua/mt_lua_jmp.S kmod/lua/mt_lua_one.c kmod/lua/patches/01-lcode-integer-constants.patch \
	kmod/lua/patches/02-lstrlib-no-float-formats.patch kmod/lua/patches/03-lvm-run-budget.patch \
	kmod/lua/patches/04-lstrlib-work-budget.patch kmod/lua/patches/05-libs-work-budget.patch \
	kmod/lua/kinc/mt_lua_kernel.h \
	$(patsubst %,kmod/lua/kinc/%.h,assert ctype errno float limits locale math setjmp \
		signal stdarg stddef stdio stdlib string time)
