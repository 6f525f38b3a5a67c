/* Local arrays filled in order by a counter: the window of a median filter,
 *
 *     array f32 window[81];  var n = 0;
 *     for r ... for k ...  if (...) { let i = n; window[i] = in[...]; n = n + 1; }
 *     out[...] = median(window, n);
 *
 * What is known of them: only element 0 can be read unwritten (the vector code zeroes only
 * it, llvm_vec.c: the 9x9 median's 2.6 KB memset per 8 pixels was 7% of its time), and the counter never passes the number of its increments one run of the
 * block can make (pass_narrow.c declares the array no longer than that). */
#ifndef PF_CODEGEN_IR_FILL_H
#define PF_CODEGEN_IR_FILL_H

#include "codegen/ir.h"

#include <stdint.h>

/* The counter n when array a, declared in body (at any depth), is filled in order: every
 * store to it is `let i = n; a[i] = v; n = n + 1;`, n changes nowhere else, `var n = 0` follows
 * the array's declaration in its block, and the array is read only by median(a, n). Then,
 * whenever the median reads, element 0 .. n - 1 have been written (an index past the end stores
 * to the last element, after the others were written). NULL otherwise. */
const ir_var *ir_fill_counter(const ir_stmt *body, const ir_var *a);

/* The most increments of `count` one run of block s can make: over its increments, the
 * product of the trip counts of the loops around each inside s (the larger branch of an
 * `if`). -1 when a loop around an increment has bounds that are not constants, or the count
 * passes 2^31 - 1. */
int64_t ir_fill_max_count(const ir_stmt *s, const ir_var *count);

#endif
