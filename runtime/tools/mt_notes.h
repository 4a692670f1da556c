/*
 * mt_notes.h - read the markers of an ELF file from its ".note.marktap"
 * notes (name and format of every trace_mark site; see marker.h).
 */
#ifndef MT_NOTES_H
#define MT_NOTES_H

#include <stddef.h>

#define MT_NOTE_OWNER "marktap"
#define MT_NOTE_TYPE  77

/* Called once per distinct (name, format) of the file. */
typedef int (*mt_note_fn)(const char *path, const char *name, const char *format, void *arg);

/* 0 on success (also with no markers), -1 with err set when the file is
 * not a readable ELF file. */
int mt_notes_read(const char *path, mt_note_fn fn, void *arg, char *err, size_t errlen);

#endif
