/*
 * mt_ctf.h - write a session's rings as a CTF 1.8 trace (doc/trace-format.md).
 */
#ifndef MT_CTF_H
#define MT_CTF_H

#include <stdio.h>
#include "mt_session.h"

#define MT_CTF_PACKET_HEADER_SIZE 84   /* header 32 + context 52 bytes */

/* The clock every trace of one recording shares. */
struct mt_ctf_clock {
	char uuid[40];          /* the boot id */
	long long offset_s;     /* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	long long offset_ns;
};

struct mt_ctf_trace {
	char *dir;
	const char *domain;     /* "ust" or "kernel" */
	unsigned char uuid[16];
	struct mt_ctf_clock clock;
	unsigned ncpu;
	int *fds;               /* one stream file per CPU */
	mt_u64 *lost;           /* per CPU: the lost count last written */
	unsigned metadata_events;  /* event classes in the metadata written */
	mt_u64 events;          /* events written (when counted) */
	int uncounted;          /* do not parse packets to count their events */
	mt_u64 packets;
	mt_u64 bytes;
};

void mt_ctf_clock_now(struct mt_ctf_clock *c);
/* Create DIR (and parents), its stream files; 0 or -1 with err set. */
int mt_ctf_open(struct mt_ctf_trace *t, const char *dir, unsigned ncpu, const char *domain,
		const struct mt_ctf_clock *clock, char *err, size_t errlen);
/* Append one packet to the CPU's stream file; counts its events. */
int mt_ctf_write_packet(struct mt_ctf_trace *t, const struct mt_session *s, unsigned cpu,
			const struct mt_ring_packet *pkt, char *err, size_t errlen);
/* (Re)write the metadata for every ready event class of the session. */
int mt_ctf_write_metadata(struct mt_ctf_trace *t, const struct mt_session *s,
			  char *err, size_t errlen);
void mt_ctf_close(struct mt_ctf_trace *t);

/* Count the events of a packet's data (0 if the data is malformed). */
mt_u64 mt_ctf_count_events(const struct mt_session *s, const char *data, mt_u64 size);

#endif
