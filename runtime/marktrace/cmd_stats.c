/*
 * cmd_stats.c - `marktrace stats`: a summary of the traces under a
 * directory: events per marker, lost events and packets, the streams
 * (one per CPU), first and last timestamp, duration and event rate.
 *
 * Streams are read one after the other (no merge is needed to count).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctf_read.h"
#include "marktrace.h"

struct marker_count {
	const char *name;
	uint64_t count;
};

struct stream_info {
	uint64_t first, last;   /* times, ns since the epoch */
	int have_time;
	uint64_t cut_time;      /* incomplete trace: where the stream stops */
	uint64_t last_seq;      /* packet_seq_num of its last whole packet */
	uint64_t events;        /* counted: without the state dump's */
};

static void put_time(char *buf, size_t n, uint64_t t)
{
	time_t sec = (time_t)(t / 1000000000u);
	struct tm tm;
	size_t k = 0;

	if (localtime_r(&sec, &tm))
		k = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
	if (!k)
		k = (size_t)snprintf(buf, n, "%lld", (long long)sec);
	snprintf(buf + k, n - k, ".%09u", (unsigned)(t % 1000000000u));
}

static int by_count(const void *a, const void *b)
{
	const struct marker_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Add c to the per-name totals (markers of several traces fold by name). */
static void add_count(struct marker_count **list, unsigned *n, const char *name, uint64_t c)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*list)[i].name, name)) {
			(*list)[i].count += c;
			return;
		}
	*list = realloc(*list, (*n + 1) * sizeof(**list));
	if (!*list)
		abort();
	(*list)[*n].name = name;
	(*list)[*n].count = c;
	(*n)++;
}

/* Each trace's environment entry key, as "label value" (the trace named
 * when there are several). */
static void print_env(const struct ctf_set *set, const char *key, const char *label)
{
	unsigned i, k;

	for (i = 0; i < set->ntraces; i++) {
		const struct ctf_trace *t = set->traces[i];
		for (k = 0; k < t->nenv; k++)
			if (!strcmp(t->env[k].key, key))
				printf("%s %s%s%s\n", label, set->ntraces > 1 ? t->name : "",
				       set->ntraces > 1 ? ": " : "", t->env[k].value);
	}
}

static void print_summary(const struct ctf_set *set, const struct stream_info *info,
			  struct marker_count *markers, unsigned nmarkers)
{
	uint64_t events = 0, lost_events = 0, lost_packets = 0, first = 0, last = 0;
	int have_time = 0;
	char t1[64], t2[64];
	unsigned i;

	for (i = 0; i < set->nstreams; i++) {
		const struct ctf_stream *s = set->streams[i];
		events += info[i].events;
		lost_events += s->total_lost_events;
		lost_packets += s->total_lost_packets;
		if (info[i].have_time) {
			if (!have_time || info[i].first < first)
				first = info[i].first;
			if (!have_time || info[i].last > last)
				last = info[i].last;
			have_time = 1;
		}
	}
	unsigned incomplete = 0, with_state = 0;

	printf("traces:    %u\n", set->ntraces);
	for (i = 0; i < set->ntraces; i++) {
		const struct ctf_trace *t = set->traces[i];
		const char *domain = "";
		unsigned k;
		for (k = 0; k < t->nenv; k++)
			if (!strcmp(t->env[k].key, "domain"))
				domain = t->env[k].value;
		printf("  %s%s%s%s%s\n", t->name, *domain ? " (" : "", domain, *domain ? ")" : "",
		       t->incomplete ? " incomplete" : "");
		incomplete += t->incomplete != 0;
		with_state += t->has_state != 0;
	}
	print_env(set, "clock_source", "clock:    ");   /* how the recorder took timestamps */
	print_env(set, "buffers", "buffers:  ");       /* how writers shared the rings */
	if (incomplete)
		printf("state:     incomplete: the recording did not end cleanly (the recorder was "
		       "killed or stopped by an error); the streams stop where 'stream ends' says, "
		       "later events are missing\n");
	else if (with_state)
		printf("state:     complete\n");
	printf("streams:   %u\n", set->nstreams);
	printf("events:    %llu\n", (unsigned long long)events);
	printf("lost:      %llu events discarded, %llu packets lost\n",
	       (unsigned long long)lost_events, (unsigned long long)lost_packets);
	if (have_time) {
		uint64_t d = last - first;
		put_time(t1, sizeof(t1), first);
		put_time(t2, sizeof(t2), last);
		printf("first:     [%s]\n", t1);
		printf("last:      [%s]\n", t2);
		printf("duration:  %llu.%09u s\n", (unsigned long long)(d / 1000000000u),
		       (unsigned)(d % 1000000000u));
		if (d)
			printf("rate:      %.0f events/s\n", (double)events * 1e9 / (double)d);
		else
			printf("rate:      -\n");
	}
	printf("\nevents per marker:\n");
	if (nmarkers)
		qsort(markers, nmarkers, sizeof(*markers), by_count);
	for (i = 0; i < nmarkers; i++)
		printf("  %12llu  %s\n", (unsigned long long)markers[i].count, markers[i].name);
	printf("\nstreams:\n  %-5s %12s %9s %10s %9s  %s\n",
	       "cpu", "events", "packets", "discarded", "lost pkt", "file");
	for (i = 0; i < set->nstreams; i++) {
		const struct ctf_stream *s = set->streams[i];
		char cpu[24];
		if (s->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%lld", (long long)s->cpu);
		else
			snprintf(cpu, sizeof(cpu), "?");
		printf("  %-5s %12llu %9llu %10llu %9llu  %s%s%s\n", cpu,
		       (unsigned long long)info[i].events, (unsigned long long)s->packets,
		       (unsigned long long)s->total_lost_events, (unsigned long long)s->total_lost_packets,
		       strcmp(s->trace->name, ".") ? s->trace->name : "",
		       strcmp(s->trace->name, ".") ? "/" : "", s->file);
	}
	if (!incomplete)
		return;
	printf("\nstream ends (incomplete recording: events after these are missing):\n"
	       "  %-5s %-31s %12s  %s\n", "cpu", "end of the last whole packet", "last seq", "file");
	for (i = 0; i < set->nstreams; i++) {
		const struct ctf_stream *s = set->streams[i];
		char cpu[24], seq[24];
		if (!s->trace->incomplete)
			continue;
		if (s->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%lld", (long long)s->cpu);
		else
			snprintf(cpu, sizeof(cpu), "?");
		if (info[i].cut_time)
			put_time(t1, sizeof(t1), info[i].cut_time);
		else
			snprintf(t1, sizeof(t1), "(no packet)");
		if (s->have_packet)
			snprintf(seq, sizeof(seq), "%llu", (unsigned long long)info[i].last_seq);
		else
			snprintf(seq, sizeof(seq), "-");
		printf("  %-5s %-31s %12s  %s%s%s%s\n", cpu, t1, seq,
		       strcmp(s->trace->name, ".") ? s->trace->name : "",
		       strcmp(s->trace->name, ".") ? "/" : "", s->file,
		       s->cut_packet ? " (its last packet was cut short)" : "");
	}
}

static int usage(FILE *out)
{
	fprintf(out, "usage: marktrace stats [--statedump] [-r] DIR\n");
	if (out == stdout)
		printf("\nEvents per marker, lost events, streams, first and last event,\n"
		       "duration and event rate of the trace (or recording) DIR; whether\n"
		       "the recording ended cleanly, and if not where each stream stops.\n\n"
		       "      --statedump  count libmarktap's state dump events too\n"
		       "  -r, --recursive  every trace under DIR, even of several recordings\n");
	return out == stdout ? 0 : 2;
}

int mt_cmd_stats(int argc, char **argv)
{
	static const struct option options[] = {
		{ "statedump", no_argument, NULL, 'T' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctf_set set;
	struct stream_info *info;
	struct marker_count *markers = NULL;
	unsigned nmarkers = 0, i, k;
	uint64_t **counts;
	const char *error = NULL;
	int c, recursive = 0, statedump = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "rh", options, NULL)) != -1) {
		switch (c) {
		case 'T': statedump = 1; break;
		case 'r': recursive = 1; break;
		case 'h': return usage(stdout);
		default: return usage(stderr);
		}
	}
	if (optind != argc - 1) {
		mt_error("stats: expected one trace directory, saw %d arguments", argc - optind);
		return 2;
	}
	if (mt_open_traces(&set, argv[optind], recursive, "stats"))
		return 1;
	for (i = 0; i < set.ntraces; i++)
		set.traces[i]->show_thread_events = statedump;
	info = calloc(set.nstreams + 1, sizeof(*info));
	counts = calloc(set.ntraces + 1, sizeof(*counts));
	if (!info || !counts)
		abort();
	for (i = 0; i < set.ntraces; i++) {
		counts[i] = calloc(set.traces[i]->nclasses + 1, sizeof(**counts));
		if (!counts[i])
			abort();
	}
	for (i = 0; i < set.nstreams && !error; i++) {
		struct ctf_stream *s = set.streams[i];
		unsigned t;
		int item;

		for (t = 0; set.traces[t] != s->trace; t++)
			;
		while ((item = ctf_stream_next(s)) != CTF_ITEM_END) {
			if (item == CTF_ITEM_ERROR) {
				error = s->error;
				break;
			}
			if (item == CTF_ITEM_LOST && s->cut) {
				info[i].cut_time = s->have_packet ? s->time : 0;
				info[i].last_seq = s->prev_seq;
			}
			if (item != CTF_ITEM_EVENT)
				continue;
			if (!statedump && mt_is_statedump(s->ev.cls->name))
				continue;   /* as view hides them */
			counts[t][s->ev.cls->index]++;
			info[i].events++;
			if (!info[i].have_time)
				info[i].first = s->time;
			info[i].last = s->time;
			info[i].have_time = 1;
		}
	}
	for (i = 0; i < set.ntraces; i++) {
		for (k = 0; k < set.traces[i]->nclasses; k++)
			if (counts[i][k])
				add_count(&markers, &nmarkers, set.traces[i]->class_list[k]->name, counts[i][k]);
		free(counts[i]);
	}
	free(counts);
	print_summary(&set, info, markers, nmarkers);
	fflush(stdout);
	if (error)
		mt_error("%s", error);
	free(markers);
	free(info);
	ctf_close(&set);
	return error ? 1 : 0;
}
