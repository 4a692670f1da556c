/*
 * mt_lib.h - libmarktap internals: the marker registry and its consumers.
 */
#ifndef MT_LIB_H
#define MT_LIB_H

#include <marktap/marker.h>
#include "mt_fmt.h"
#include "mt_session.h"

#define MT_EXPORT __attribute__((visibility("default")))

/* What libmarktap keeps per marker (marker->rt). */
struct mt_marker_rt {
	struct mt_format format;
	int format_ok;       /* 0: malformed, never armed */
	int event_id;        /* id in the recording session, or -1 */
};

/* registry.c: walk every registered marker under the registry lock. */
typedef void (*mt_marker_fn)(struct mt_marker *m, void *arg);
void mt_registry_for_each(mt_marker_fn fn, void *arg);
/* Arm / disarm a marker for a consumer (MT_ARMED_*); registry lock held. */
void mt_marker_arm(struct mt_marker *m, unsigned consumer);
void mt_marker_disarm(struct mt_marker *m, unsigned consumer);
void mt_registry_lock(void);
void mt_registry_unlock(void);

/* record.c: the recorder consumer. */
void mt_record_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);
/* A new marker appeared (registry lock held): arm it if the session wants it. */
void mt_record_marker_added(struct mt_marker *m);
/* Attach to a session mapping (from MARKTAP_SHM_FD or the agent); 0 or -errno. */
int mt_record_attach(int fd, char *err, size_t errlen);
void mt_record_detach(void);

/* Hook for probe scripts (set by the script host); called for armed markers. */
extern void (*mt_script_hit)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);

#endif
