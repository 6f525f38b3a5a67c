/* Whether a loop body may run again for iterations it already ran, leaving memory as it was:
 * what lets a vectorized loop end with one full vector shifted back over the last iterations
 * instead of a scalar tail (codegen/llvm_vec.c, em_vector_loop). */
#ifndef PF_CODEGEN_IR_RERUN_H
#define PF_CODEGEN_IR_RERUN_H

#include "codegen/ir.h"

#include <stdbool.h>

/* True when every store of loop's body writes the iteration's own location (no scatter) a value
 * that depends only on the iteration and on memory the body does not write: no buffer is both
 * stored and loaded in it, it assigns no mutable and stores into no array declared outside it,
 * and it makes no runtime call, sort or allocation. Running an iteration twice then stores the
 * same values again, where no other iteration writes. n_vars: the function's variable count. */
bool ir_body_reruns_safely(const ir_stmt *loop, int n_vars);

#endif
