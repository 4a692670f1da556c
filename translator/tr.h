/*
 * tr.h - the marktap translator's interfaces, all of them.
 *
 * A script goes through these passes (stap's numbering), each with its
 * header:
 *   1  lex (tr_lex_*), preprocess (tr_pp_*), parse (tr_parse): a tree
 *      tr_ast.h (on tr_base.h: memory, buffers, tokens, diagnostics)
 *   2  elaborate (tr_elab_*): probe points, aliases, tapsets, types
 *      tr_elab.h (on tr_points.h: resolved points and where they come from)
 *   3  generate Lua (tr_generate)
 *      tr_gen.h
 *   4  write the module file (tr_module_*)
 *   5  run it (tr_run_live, or tr_trace_run over a stored trace)
 *      tr_run.h
 * The translator's own files include the headers they use; this one is
 * for code that takes the translator whole (tests/fuzz).
 */
#ifndef TR_H
#define TR_H

#include "tr_base.h"
#include "tr_ast.h"
#include "tr_points.h"
#include "tr_elab.h"
#include "tr_gen.h"
#include "tr_run.h"

#endif
