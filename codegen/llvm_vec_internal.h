/* Shared by the explicit vectorizer's files (llvm_vec.c: classification and emission of a
 * vector body; llvm_vstride.c: strided reads and writes; llvm_vmedian.c: medians across lanes):
 * the lane classification of values and the state of one vector body. */
#ifndef PF_CODEGEN_LLVM_VEC_INTERNAL_H
#define PF_CODEGEN_LLVM_VEC_INTERNAL_H

#include "codegen/llvm_internal.h"

/* V_PERM: a float vector whose lanes are in the order of a transposed stride-4 group
 * (llvm_vstride.c); float arithmetic between such vectors keeps it, anything else restores the
 * natural order first (vec_as_vector). */
typedef enum vkind { V_UNIFORM, V_AFFINE, V_VECTOR, V_PERM } vkind;

typedef struct vval {
    vkind kind;
    LLVMValueRef v;   /* UNIFORM: scalar; AFFINE: the scalar base (lane 0); VECTOR: <W x T> */
    int64_t stride;   /* AFFINE: lane stride */
} vval;

typedef struct vgroups vgroups;

typedef struct vec {
    emit *e;
    int W;
    const ir_var *lane;  /* the vectorized loop variable */
    char *inside;        /* by var id: defined inside the vector body */
    vval *val;           /* by var id: lets defined inside */
    LLVMValueRef *vslot; /* by var id: vector allocas of mutables and arrays defined inside */
    LLVMValueRef mask;   /* <W x i1> of active lanes, or NULL when all are */
    LLVMValueRef base;   /* the lane variable's value in lane 0 */
    int64_t step;        /* the loop's (constant) step */
    vgroups *groups;     /* strided reads and writes done together (llvm_vstride.c) */
    char *uniform;       /* by var id: a variable of the body known to be the same in all
                            lanes, decided before emission; such a mutable is one
                            scalar slot (e->var) instead of a vector */
    bool no_unroll;      /* the body has a median network: unrolling the loop (or the outer
                            loops filling its window) only copies code */
    const ir_stmt *body; /* the loop's body */
} vec;

vval vec_x(vec *v, const ir_expr *x);
LLVMTypeRef vec_type(vec *v, ir_type t);
LLVMValueRef vec_as_vector(vec *v, vval x);
/* Whether x mentions only the lane variable and values from outside the body. */
bool vec_outside_only(const vec *v, const ir_expr *x);
LLVMValueRef vec_lane0_ptr(vec *v, const ir_buffer *buf, vval *iv, ir_expr *const *ix);

/* Before the body's first statement: loads the reads of the body's unconditional statements
 * that are taps of one strided row (in[4x - 8 + k, y], k = 0..16) once for all of them. */
void vec_groups_begin(vec *v, const ir_stmt *body);
void vec_groups_end(vec *v);
/* Emits store s when it belongs to a group of strided stores (at the group's last member);
 * false when it does not. */
bool vec_group_store(vec *v, const ir_stmt *s);
/* Read x (indices iv) when its lanes are strided along one row (from a group, possibly
 * V_PERM, or loaded in dense chunks); false when x is not such a read. */
bool vec_strided_load(vec *v, const ir_expr *x, vval *iv, vval *out);
/* Whether a read with indices iv is one vec_strided_load_at can load: lanes at stride 2..4
 * along dimension 0, the other dimensions uniform. */
bool vec_shuffle_strided(const vec *v, const ir_buffer *buf, const vval *iv);
/* The W lanes p[0], p[s], ..., p[(W - 1) s], loaded as dense chunks and shuffled. */
LLVMValueRef vec_strided_load_at(vec *v, LLVMValueRef p, int s);
/* A V_PERM vector's lanes in natural order. */
LLVMValueRef vec_unpermute(vec *v, LLVMValueRef x);

/* llvm_vmedian.c: median(a, n) on W lanes: a selection network of vector min/max where every
 * lane's n covers the whole array and (floats) no element is NaN, else the runtime's scalar
 * median per lane. */
vval vec_median(vec *v, const ir_expr *x);

#endif
