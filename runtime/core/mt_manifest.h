/*
 * mt_manifest.h - the manifest of a script frame: what marktap tells the
 * script host of a traced process besides the Lua chunk.
 *
 * marktap writes it (translator/session.c), the host reads it
 * (runtime/script/host.c), before the chunk in the 'S' frame
 * (runtime/lib/mt_wire.h), one line each, then an empty line:
 *
 *   option NAME VALUE            a -D limit, "guru", "target"
 *   write out own | write err own
 *                                handler output goes to the process's own
 *                                stdout (stderr): it is marktap's
 *   bind probe_N PATH MARKER     a libmarktap marker of object PATH ("*": any)
 *   sdt probe_N PATH PROVIDER NAME
 *                                an SDT probe
 *   func probe_N e|r 0xADDR PATH CFA
 *   fvar probe_N K RECIPE        a function probe, entry or .return, and the
 *                                recipe of each value it reads (ufunc.h)
 *
 * A function probe is bound as an SDT probe of provider MT_FUNC_PROVIDER
 * named probe_N: the translator resolves it so, the host attaches it so.
 */
#ifndef MT_MANIFEST_H
#define MT_MANIFEST_H

#define MT_FUNC_PROVIDER "process.function"

#endif
