/*
 * mt_lib.h - libmarktap internals: the marker registry and its consumers.
 */
#ifndef MT_LIB_H
#define MT_LIB_H

#include <pthread.h>
#include <signal.h>
#include <marktap/marker.h>
#include "mt_fmt.h"
#include "mt_session.h"

#define MT_EXPORT __attribute__((visibility("default")))

/* What libmarktap keeps per marker (marker->rt). */
struct mt_marker_rt {
	struct mt_format format;
	int format_ok;       /* 0: malformed, never armed */
	int event_id;        /* id in the recording session, or -1 */
	void *script;        /* the script host's handlers for this marker */
};

/* ranges.c: a range of descriptors an object registers ("__markers", "__mt_sites"),
 * counted: each translation unit of the object registers the same one. */
struct mt_range {
	void *begin, *end;
	int refs;
	struct mt_range *next;
};
/* One more use of [begin, end) in *list: a new range, refs 1, that the
 * caller links (r->next is *list) -- or NULL: known and counted, or no
 * memory. */
struct mt_range *mt_range_add(struct mt_range **list, void *begin, void *end);
/* One use less: the range, unlinked, when it was the last (the caller
 * frees it); else NULL. */
struct mt_range *mt_range_drop(struct mt_range **list, const void *begin);

/* A detached thread of ours in the traced program (the agent, the site
 * poller, the script host's server), with every signal blocked but
 * SIGTRAP: the program's signal handlers run on its own threads, never
 * on ours (a handler that hits a marker while one of ours waits for the
 * end would lose its hit), and a probe's trap in libc code we run still
 * works (a trap with SIGTRAP blocked kills the process).  0 or an errno. */
static inline int mt_thread_start(void *(*fn)(void *), void *arg, size_t stack)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	rc = pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* A consumer of marker hits (the recorder's writer, the script hook). */
typedef void (*mt_hit_fn)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);

/* registry.c: the lock, walking every registered marker under it. */
void mt_registry_lock(void);
void mt_registry_unlock(void);
typedef void (*mt_marker_fn)(struct mt_marker *m, void *arg);
void mt_registry_for_each(mt_marker_fn fn, void *arg);
/* Arm / disarm a marker for a consumer (MT_ARMED_*); registry lock held. */
void mt_marker_arm(struct mt_marker *m, unsigned consumer);
void mt_marker_disarm(struct mt_marker *m, unsigned consumer);
/* A range of markers in (1: new, prepared) and out (the range, unlinked,
 * at its last use); registry lock held (markers.c). */
int mt_registry_add(struct mt_marker *begin, struct mt_marker *end);
struct mt_range *mt_registry_remove(const struct mt_marker *begin);
/* sites.c: marker m's patched sites as its gate now says (after arming or
 * disarming). */
void mt_sites_update(struct mt_marker *m);

/* record.c: the recorder consumer. */
void mt_record_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap, const void *ip);
/* A new marker appeared (registry lock held): arm it if the session wants it. */
void mt_record_marker_added(struct mt_marker *m);
/* Attach to a session mapping (from MARKTAP_SHM_FD or the agent); 0 or -errno. */
int mt_record_attach(int fd, char *err, size_t errlen);
void mt_record_detach(void);
/* An object with markers was loaded (registry lock held): say where. */
void mt_record_object_added(const void *addr);

/* statedump.c: one marktap_statedump:bin_info event per loaded object
 * (addr NULL), or (an object was loaded, addr in it) for each object not
 * dumped before; registry lock held. */
void mt_statedump(struct mt_session *s, const void *addr);
/* The same objects again, as last dumped (a forked child: no loader walk;
 * the statedump lock held). */
void mt_statedump_again(struct mt_session *s);
/* Objects loaded or unloaded since the last walk (a plugin without
 * markers): hits call mt_statedump_poll once their timestamp passes
 * mt_statedump_due.ns; it writes the new objects' bin_info at most once a
 * period.  mt_statedump_stop: the session ends, hits stop asking. */
struct mt_statedump_due {
	mt_u64 ns;
	char pad[64 - sizeof(mt_u64)];  /* alone on its line: read by every hit */
} __attribute__((aligned(64)));
extern struct mt_statedump_due mt_statedump_due;
void mt_statedump_poll(struct mt_session *s, mt_u64 now);
void mt_statedump_stop(void);
/* The lock of the list of dumped objects, held across fork. */
void mt_statedump_lock(void);
void mt_statedump_unlock(void);
/* How its events are written (the recorder's mt_record_hit). */
void mt_statedump_set_writer(mt_hit_fn fn);

/*
 * The script host: a plugin (libmarktap-script.so, runtime/script/) that
 * libmarktap loads only when marktap runs a script in this process, so that
 * programs never probed by a script do not map Lua.  It reaches the
 * registry through these operations and sets the hooks.
 */
struct mt_args;
#define MT_SCRIPT_OPS_VERSION 2
struct mt_script_ops {
	unsigned version;
	void (*lock)(void);
	void (*unlock)(void);
	void (*for_each)(mt_marker_fn fn, void *arg);
	void (*arm)(struct mt_marker *m, unsigned consumer);
	void (*disarm)(struct mt_marker *m, unsigned consumer);
	size_t (*fetch)(const struct mt_format *f, va_list ap, struct mt_args *a);
	/* called for markers armed MT_ARMED_SCRIPT */
	void (**hit)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);
	/* a marker appeared (dlopen) or is about to go (dlclose); registry lock held */
	void (**added)(struct mt_marker *m);
	void (**removed)(struct mt_marker *m);
	/* the process is about to _exit/abort (MT_FINAL_EXIT) or exec
	 * (MT_FINAL_EXEC): hand marktap what the handlers did (final.c) */
	void (**final)(int why);
	/* around libmarktap's own work on a thread of the program (its
	 * threads' start): on 1, then 0; what it calls meanwhile is not the
	 * program's (host.c ignores those hits) */
	void (**own)(int on);
};
enum { MT_FINAL_EXIT = 1, MT_FINAL_EXEC = 2 };
/* The plugin's entry point: serve the marktap session on fd (which it owns).
 * forked: this process is a fork of one that already runs the script. */
typedef int (*mt_script_start_fn)(const struct mt_script_ops *ops, int fd, int forked);
#define MT_SCRIPT_START "mt_script_plugin_start"

/* markers.c: the hooks the plugin sets */
extern void (*mt_script_hit)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);
extern void (*mt_script_added)(struct mt_marker *m);
extern void (*mt_script_removed)(struct mt_marker *m);
extern void (*mt_script_final)(int why);
/* script.c: set by the script host; libmarktap's threads start through
 * mt_lib_thread_start, which tells it (its probes ignore those calls) */
extern void (*mt_script_own)(int on);
int mt_lib_thread_start(void *(*fn)(void *), void *arg, size_t stack);
/* script.c: load the plugin and hand it the session connection: 0; -1
 * with a message in err; -2 when the plugin already told marktap why. */
int mt_script_load(int fd, const char *plugin, char *err, size_t errlen);
/* script.c: join the session of "marktap -c" named in the environment. */
void mt_script_join_session(void);

#endif
