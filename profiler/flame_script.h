/* The script a flame graph (profiler/flame.h) carries to be explored in a
 * browser: click a box to zoom to it (its callees fill the width), "Reset zoom"
 * or Escape to undo; "Search" or Ctrl-F highlights the functions matching a
 * regular expression and prints the share of the samples under them. It finds
 * the boxes as flame.c writes them (a <g> with a <title> "name (N samples, P%)",
 * a <rect> and a <text>) and the controls by id: "reset", "search", "matched".
 * Constant text, so the SVG stays byte-for-byte deterministic; it contains no
 * "]]>" and goes inside a CDATA section. */
#ifndef PMUSIM_PROFILER_FLAME_SCRIPT_H
#define PMUSIM_PROFILER_FLAME_SCRIPT_H

extern const char flame_script[];

#endif
