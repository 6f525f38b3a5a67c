/* Parallel loops: the body is outlined into `i32 body(ptr closure, i32 begin, i32 end)`, the
 * values it uses from outside are packed into a closure (one i64 slot each), and the loop
 * becomes one call of pf_rt_parallel_for. A non-zero status from any iteration (an allocation
 * or stage-runtime failure inside) is returned by the enclosing function. */
#include "codegen/llvm_internal.h"

#include "base/arena.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct captures {
    const ir_func *f;
    char *defined;     /* by var id: defined inside the body */
    char *used;        /* by var id: used inside the body */
    char *bufs;        /* by buffer id: used inside the body */
    char *scalar_slot; /* by var id: 1 a mutable or loop variable the body reads, 2 one it
                          assigns */
} captures;

static void use_var(captures *c, const ir_var *v)
{
    if (!v->const_init)
        c->used[v->id] = 1;
    if ((v->kind == IR_VAR_MUT || v->kind == IR_VAR_LOOP) && !c->scalar_slot[v->id])
        c->scalar_slot[v->id] = 1;
}

static void use_buf(captures *c, const ir_buffer *b)
{
    c->bufs[b->id] = 1;
    for (int d = 0; d < b->ndims; d++) {
        c->used[b->extent[d]->id] = 1;
        c->used[b->stride[d]->id] = 1;
        if (b->window) {
            c->used[b->origin[d]->id] = 1;
            c->used[b->size[d]->id] = 1;
        }
    }
}

static void walk_expr(captures *c, const ir_expr *e);

static void walk_expr(captures *c, const ir_expr *e)
{
    if (!e)
        return;
    if (e->kind == IR_VARREF || e->kind == IR_ALOAD)
        use_var(c, e->var);
    if (e->kind == IR_LOAD || e->kind == IR_INTERP)
        use_buf(c, e->buf);
    if (e->kind == IR_INTERP) {
        use_buf(c, e->interp->image);
        if (e->interp->ref)
            use_buf(c, e->interp->ref);
    }
    walk_expr(c, e->a);
    walk_expr(c, e->b);
    walk_expr(c, e->c);
    for (int i = 0; i < e->n_args; i++)
        walk_expr(c, e->args[i]);
}

static void walk_stmt(captures *c, const ir_stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case IR_S_LET: case IR_S_DECL: case IR_S_ARRAY_DECL: case IR_S_FOR:
        c->defined[s->var->id] = 1;
        break;
    case IR_S_ASSIGN: case IR_S_ARRAY_STORE: case IR_S_SORT:
        use_var(c, s->var);
        c->scalar_slot[s->var->id] = 2;
        break;
    case IR_S_STORE: case IR_S_ALLOC:
        use_buf(c, s->buf);
        break;
    case IR_S_RTCALL:
        for (int i = 0; i < s->n_bufs; i++)
            use_buf(c, s->bufs[i]);
        break;
    default:
        break;
    }
    if (s->kind == IR_S_ALLOC) {  /* allocated inside: its data, strides, window defined here */
        const ir_buffer *b = s->buf;
        for (int d = 0; d < b->ndims; d++) {
            c->defined[b->stride[d]->id] = 1;
            if (s->window) {
                walk_expr(c, s->window[2 * d]);
                walk_expr(c, s->window[2 * d + 1]);
                c->defined[b->origin[d]->id] = c->defined[b->size[d]->id] = 1;
            }
        }
    }
    walk_expr(c, s->value);
    walk_expr(c, s->index);
    walk_expr(c, s->lo);
    walk_expr(c, s->hi);
    walk_expr(c, s->step);
    walk_expr(c, s->cond);
    for (int i = 0; i < s->n && (s->kind == IR_S_STORE || s->kind == IR_S_RTCALL); i++)
        walk_expr(c, s->kind == IR_S_STORE ? s->idx[i] : s->args[i]);
    for (int i = 0; s->kind == IR_S_BLOCK && i < s->n; i++)
        walk_stmt(c, s->body[i]);
    if (s->kind != IR_S_BLOCK) {
        walk_stmt(c, s->then_s);
        walk_stmt(c, s->else_s);
    }
}

/* ---- packing values into i64 slots ---- */

static LLVMValueRef to_slot(emit *e, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (t == e->t_ptr)
        return LLVMBuildPtrToInt(e->b, v, e->t_i64, "");
    if (t == e->t_f32)
        return LLVMBuildZExt(e->b, LLVMBuildBitCast(e->b, v, e->t_i32, ""), e->t_i64, "");
    if (t == e->t_i64)
        return v;
    return LLVMBuildZExt(e->b, v, e->t_i64, "");
}

static LLVMValueRef from_slot(emit *e, LLVMValueRef v, LLVMTypeRef t)
{
    if (t == e->t_ptr)
        return LLVMBuildIntToPtr(e->b, v, e->t_ptr, "");
    if (t == e->t_f32)
        return LLVMBuildBitCast(e->b, LLVMBuildTrunc(e->b, v, e->t_i32, ""), e->t_f32, "");
    if (t == e->t_i64)
        return v;
    return LLVMBuildTrunc(e->b, v, t, "");
}

static LLVMValueRef slot_ptr(emit *e, LLVMValueRef closure, int i)
{
    LLVMValueRef idx = em_i64(e, i);
    return LLVMBuildInBoundsGEP2(e->b, e->t_i64, closure, &idx, 1, "");
}

typedef struct saved_state {
    LLVMValueRef fn;
    LLVMBasicBlockRef fail_bb, rt_fail_bb, bb;
    LLVMBuilderRef ab;
    LLVMValueRef *var, *buf_data;
    int n_rows;
} saved_state;

static void save(emit *e, saved_state *s)
{
    s->fn = e->fn;
    s->fail_bb = e->fail_bb;
    s->rt_fail_bb = e->rt_fail_bb;
    s->bb = LLVMGetInsertBlock(e->b);
    s->ab = e->ab;
    s->var = e->var;
    s->buf_data = e->buf_data;
    s->n_rows = e->n_rows;
}

static void restore(emit *e, const saved_state *s)
{
    LLVMDisposeBuilder(e->ab);
    free(e->var);
    free(e->buf_data);
    e->fn = s->fn;
    e->fail_bb = s->fail_bb;
    e->rt_fail_bb = s->rt_fail_bb;
    e->ab = s->ab;
    e->var = s->var;
    e->buf_data = s->buf_data;
    e->n_rows = s->n_rows;
    LLVMPositionBuilderAtEnd(e->b, s->bb);
}

static void return_block(emit *e, LLVMBasicBlockRef *bb, int code)
{
    *bb = new_block(e, code == 1 ? "fail" : "rt_fail");
    LLVMPositionBuilderAtEnd(e->b, *bb);
    LLVMBuildRet(e->b, em_i32(e, code));
}

static int count_bufs(const captures *c, const saved_state *out)
{
    int n = 0;
    for (int id = 0; id < c->f->n_buffers; id++)
        n += c->bufs[id] && out->buf_data[id];
    return n;
}

/* Whether captured variable id is a scalar the outlined code only reads, kept in the caller's
 * frame (a mutable or loop variable): it is passed by value, so its storage in the caller
 * does not escape (LLVM keeps it in a register there: an outer row loop's variable around a
 * cold loop), and the callee reads a copy of its own, which LLVM keeps in a register too.
 * Read through the caller's address, it was loaded again after every store the body makes
 * to memory LLVM cannot tell apart from the caller's frame (a window from pf_rt_alloc): the
 * image rows of the paper's blur variant reloaded and re-multiplied their channel's offset
 * for every vector. */
/* Whether variable id (var: its storage or value in the caller, or NULL) comes from outside
 * the outlined code. */
static bool from_outside(const captures *c, int id, LLVMValueRef var)
{
    return c->used[id] && !c->defined[id] && var;
}

static bool by_value(const captures *c, int id, LLVMValueRef storage)
{
    return c->scalar_slot[id] == 1 && LLVMIsAAllocaInst(storage) &&
           LLVMGetTypeKind(LLVMGetAllocatedType(storage)) != LLVMArrayTypeKind;
}

static LLVMValueRef local_copy(emit *e, LLVMValueRef value)
{
    LLVMValueRef local = entry_alloca(e, LLVMTypeOf(value), "captured");
    LLVMBuildStore(e->b, value, local);
    return local;
}

/* Makes fn (internal; its last nb parameters, from first_buf on, noalias buffers) the function
 * being emitted, with fresh variable and buffer tables (constant tables shared), an entry block
 * for allocas and the failure returns; the builder is left at the start of its code. */
static void begin_function(emit *e, LLVMValueRef fn, int first_buf, int nb,
                           const saved_state *out)
{
    const ir_func *f = e->irf;
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    for (int i = 0; i < nb; i++)
        LLVMAddAttributeAtIndex(fn, (unsigned)(first_buf + 1 + i),
                                LLVMCreateEnumAttribute(e->ctx, noalias, 0));
    e->fn = fn;
    e->var = pf_xcalloc((size_t)f->n_vars + 1, sizeof *e->var);
    e->buf_data = pf_xcalloc((size_t)f->n_buffers + 1, sizeof *e->buf_data);
    e->n_rows = 0;
    for (int i = 0; i < f->n_tables; i++)  /* constant tables are module globals */
        e->var[f->tables[i]->id] = out->var[f->tables[i]->id];
    e->ab = LLVMCreateBuilderInContext(e->ctx);
    LLVMBasicBlockRef entry = new_block(e, "entry"), start = new_block(e, "start");
    LLVMPositionBuilderAtEnd(e->ab, entry);
    return_block(e, &e->fail_bb, 1);
    return_block(e, &e->rt_fail_bb, 3);
    LLVMPositionBuilderAtEnd(e->b, start);
}

/* The chunk function: `i32 chunk(ptr closure, i32 begin, i32 end, ptr noalias buf...)`. The
 * buffers arrive as noalias arguments (not through the closure) so LLVM keeps knowing that
 * distinct images never alias, which it needs to vectorize the body. Slots of the closure:
 * [0] lo, [1] step, then the captured variables in id order. */
static LLVMValueRef outline(emit *e, const captures *c, const saved_state *out)
{
    const ir_func *f = c->f;
    int nb = count_bufs(c, out);
    LLVMTypeRef *ps = pf_xmalloc(sizeof *ps * (size_t)(3 + nb));
    ps[0] = e->t_ptr;
    ps[1] = ps[2] = e->t_i32;
    for (int i = 0; i < nb; i++)
        ps[3 + i] = e->t_ptr;
    LLVMValueRef fn = LLVMAddFunction(e->mod, "pf_parallel_chunk",
                                      LLVMFunctionType(e->t_i32, ps, (unsigned)(3 + nb), 0));
    free(ps);
    begin_function(e, fn, 3, nb, out);
    LLVMValueRef closure = LLVMGetParam(fn, 0);
    int slot = 2;
    for (int id = 0; id < f->n_vars; id++) {
        if (!from_outside(c, id, out->var[id]))
            continue;
        /* lets: the value; mutables, loop variables, arrays: the address of their storage in
         * the caller's frame (alive while the call waits; stage bodies only read them). */
        LLVMValueRef raw = LLVMBuildLoad2(e->b, e->t_i64, slot_ptr(e, closure, slot++), "");
        if (by_value(c, id, out->var[id]))
            e->var[id] = local_copy(e, from_slot(e, raw, LLVMGetAllocatedType(out->var[id])));
        else
            e->var[id] = from_slot(e, raw, LLVMTypeOf(out->var[id]));
    }
    int k = 3;
    for (int id = 0; id < f->n_buffers; id++)
        if (c->bufs[id] && out->buf_data[id])
            e->buf_data[id] = LLVMGetParam(fn, (unsigned)k++);
    return fn;
}

/* The task pf_rt_parallel_for calls: passes the buffers (stored after the variables in the
 * closure) as arguments of the chunk function. */
static LLVMValueRef task_wrapper(emit *e, LLVMValueRef chunk, int n_var_slots, int nb)
{
    LLVMTypeRef ps[3] = { e->t_ptr, e->t_i32, e->t_i32 };
    LLVMValueRef fn = LLVMAddFunction(e->mod, "pf_parallel_task",
                                      LLVMFunctionType(e->t_i32, ps, 3, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(e->ctx, fn, "entry");
    LLVMBuilderRef b = e->b;
    LLVMPositionBuilderAtEnd(b, bb);
    LLVMValueRef *args = pf_xmalloc(sizeof *args * (size_t)(3 + nb));
    for (int i = 0; i < 3; i++)
        args[i] = LLVMGetParam(fn, (unsigned)i);
    for (int i = 0; i < nb; i++) {
        LLVMValueRef raw = LLVMBuildLoad2(b, e->t_i64, slot_ptr(e, LLVMGetParam(fn, 0),
                                                               n_var_slots + i), "");
        args[3 + i] = LLVMBuildIntToPtr(b, raw, e->t_ptr, "");
    }
    LLVMValueRef r = LLVMBuildCall2(b, LLVMGlobalGetValueType(chunk), chunk, args,
                                    (unsigned)(3 + nb), "");
    LLVMBuildRet(b, r);
    free(args);
    return fn;
}

static void emit_chunk_loop(emit *e, const ir_stmt *s, LLVMValueRef fn, LLVMValueRef lo,
                            LLVMValueRef step)
{
    LLVMValueRef i = entry_alloca(e, e->t_i32, "i");
    LLVMBuildStore(e->b, LLVMGetParam(fn, 1), i);
    LLVMValueRef iv = entry_alloca(e, e->t_i32, s->var->name);
    e->var[s->var->id] = iv;
    LLVMBasicBlockRef head = new_block(e, "chunk"), body = new_block(e, "iter"),
                      done = new_block(e, "chunk_end");
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, head);
    LLVMValueRef cur = LLVMBuildLoad2(e->b, e->t_i32, i, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, cur, LLVMGetParam(fn, 2), ""), body,
                    done);
    LLVMPositionBuilderAtEnd(e->b, body);
    LLVMValueRef v = LLVMBuildAdd(e->b, lo, LLVMBuildMul(e->b, cur, step, ""), "");
    LLVMBuildStore(e->b, v, iv);
    em_stmt(e, s->then_s);
    cur = LLVMBuildLoad2(e->b, e->t_i32, i, "");
    LLVMBuildStore(e->b, LLVMBuildAdd(e->b, cur, em_i32(e, 1), ""), i);
    em_loop_no_unroll(e, LLVMBuildBr(e->b, head));
    LLVMPositionBuilderAtEnd(e->b, done);
    LLVMBuildRet(e->b, em_i32(e, 0));
}

/* The values the outlined code uses from outside, found by walking s (a loop's body, or a
 * cold loop). */
static captures captures_of(const ir_func *f, const ir_stmt *s, const ir_var *defined)
{
    captures c = { f, pf_xcalloc((size_t)f->n_vars + 1, 1), pf_xcalloc((size_t)f->n_vars + 1, 1),
                   pf_xcalloc((size_t)f->n_buffers + 1, 1), pf_xcalloc((size_t)f->n_vars + 1, 1) };
    if (defined)
        c.defined[defined->id] = 1;
    walk_stmt(&c, s);
    return c;
}

static void free_captures(captures *c)
{
    free(c->defined);
    free(c->used);
    free(c->bufs);
    free(c->scalar_slot);
}

void em_free_values(const ir_func *f, const ir_stmt *s, char *vars, char *bufs)
{
    captures c = captures_of(f, s, NULL);
    for (int id = 0; id < f->n_vars; id++)
        vars[id] = c.used[id] && !c.defined[id];
    memcpy(bufs, c.bufs, (size_t)f->n_buffers);
    free_captures(&c);
}

/* The closure: [0] lo, [1] step, the captured variables in id order, then the buffers;
 * *n_var_slots is where the buffers start. */
static LLVMValueRef pack_closure(emit *e, const captures *c, LLVMValueRef lo, LLVMValueRef step,
                                 int *n_var_slots)
{
    const ir_func *f = e->irf;
    int n_slots = 2;
    for (int id = 0; id < f->n_vars; id++)
        n_slots += from_outside(c, id, e->var[id]);
    for (int id = 0; id < f->n_buffers; id++)
        n_slots += c->bufs[id] && e->buf_data[id];
    LLVMValueRef closure = entry_alloca(e, LLVMArrayType(e->t_i64, (unsigned)n_slots), "closure");
    LLVMBuildStore(e->b, to_slot(e, lo), slot_ptr(e, closure, 0));
    LLVMBuildStore(e->b, to_slot(e, step), slot_ptr(e, closure, 1));
    int slot = 2;
    for (int id = 0; id < f->n_vars; id++) {
        if (!from_outside(c, id, e->var[id]))
            continue;
        LLVMValueRef v = e->var[id];
        if (by_value(c, id, v))
            v = LLVMBuildLoad2(e->b, LLVMGetAllocatedType(v), v, "");
        LLVMBuildStore(e->b, to_slot(e, v), slot_ptr(e, closure, slot++));
    }
    *n_var_slots = slot;
    for (int id = 0; id < f->n_buffers; id++)
        if (c->bufs[id] && e->buf_data[id])
            LLVMBuildStore(e->b, to_slot(e, e->buf_data[id]), slot_ptr(e, closure, slot++));
    return closure;
}

/* A non-zero status returns from the enclosing function. */
static void return_on_failure(emit *e, LLVMValueRef status)
{
    LLVMBasicBlockRef ok = new_block(e, "call_ok"), bad = new_block(e, "call_fail");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, status, em_i32(e, 0), ""), ok, bad);
    LLVMPositionBuilderAtEnd(e->b, bad);
    LLVMBuildRet(e->b, status);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

/* A piece of another module (split.h) is an external function with the piece's name, recorded
 * with its module so that the other modules keep only its declaration. */
static void make_piece(emit *e, LLVMValueRef fn, const pf_piece *piece)
{
    char name[32];
    snprintf(name, sizeof name, "pf_piece_%d", pf_split_index(e->split, piece));
    LLVMSetValueName2(fn, name, strlen(name));
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    if (e->n_owned == e->cap_owned) {
        e->cap_owned = e->cap_owned ? 2 * e->cap_owned : 8;
        e->owned = pf_xrealloc(e->owned, sizeof *e->owned * (size_t)e->cap_owned);
    }
    e->owned[e->n_owned++] = (struct em_owned){ fn, piece->module,
                                                pf_split_index(e->split, piece) };
}

void em_parallel_for(emit *e, const ir_stmt *s, const pf_piece *piece)
{
    captures c = captures_of(e->irf, s->then_s, s->var);
    /* Outside: evaluate the bounds and pack the closure. */
    LLVMValueRef lo = em_expr(e, s->lo), hi = em_expr(e, s->hi), step = em_expr(e, s->step);
    int n_var_slots;
    LLVMValueRef closure = pack_closure(e, &c, lo, step, &n_var_slots);
    LLVMValueRef n = em_trip_count(e, lo, hi, step);
    /* The outlined body. */
    saved_state out;
    save(e, &out);
    int nb = count_bufs(&c, &out);
    LLVMValueRef chunk = outline(e, &c, &out);
    LLVMValueRef blo = LLVMBuildLoad2(e->b, e->t_i64, slot_ptr(e, LLVMGetParam(chunk, 0), 0), "");
    LLVMValueRef bstep = LLVMBuildLoad2(e->b, e->t_i64, slot_ptr(e, LLVMGetParam(chunk, 0), 1),
                                        "");
    emit_chunk_loop(e, s, chunk, LLVMBuildTrunc(e->b, blo, e->t_i32, ""),
                    LLVMBuildTrunc(e->b, bstep, e->t_i32, ""));
    LLVMBuildBr(e->ab, LLVMGetNextBasicBlock(LLVMGetFirstBasicBlock(chunk)));
    LLVMValueRef fn = task_wrapper(e, chunk, n_var_slots, nb);
    if (piece)
        make_piece(e, fn, piece);
    restore(e, &out);
    /* The call. */
    LLVMValueRef args[3] = { fn, closure, n };
    LLVMTypeRef ps[3] = { e->t_ptr, e->t_ptr, e->t_i32 };
    return_on_failure(e, em_call_ext(e, "pf_rt_parallel_for", e->t_i32, ps, 3, args));
    free_captures(&c);
}

/* The cold loop's function: `i32 pf_cold(i32 lo, value..., ptr noalias buf...)`, called in
 * place of the loop: lo its first value, then the values it uses from outside in their own
 * types (read-only mutables and loop variables by value, others by address), then the
 * buffers. Arguments rather than a closure in memory: a cold loop sits inside hot loops, and
 * LLVM's LICM spent a quarter of a blur compile on the closures' stores there. Its code still
 * goes through the IR passes (it is small after SROA); only code generation is cheap. */
void em_cold_loop(emit *e, const ir_stmt *s, LLVMValueRef lo, bool is_tail)
{
    const ir_func *f = e->irf;
    captures c = captures_of(e->irf, s, NULL);
    saved_state out;
    save(e, &out);
    int nv = 0, nb = count_bufs(&c, &out);
    for (int id = 0; id < f->n_vars; id++)
        nv += from_outside(&c, id, e->var[id]);
    LLVMValueRef *args = pf_xmalloc(sizeof *args * (size_t)(1 + nv + nb));
    LLVMTypeRef *ps = pf_xmalloc(sizeof *ps * (size_t)(1 + nv + nb));
    int n = 0;
    args[n++] = lo;
    for (int id = 0; id < f->n_vars; id++) {
        if (!from_outside(&c, id, e->var[id]))
            continue;
        LLVMValueRef v = e->var[id];
        args[n++] = by_value(&c, id, v) ? LLVMBuildLoad2(e->b, LLVMGetAllocatedType(v), v, "")
                                        : v;
    }
    for (int id = 0; id < f->n_buffers; id++)
        if (c.bufs[id] && out.buf_data[id])
            args[n++] = out.buf_data[id];
    for (int i = 0; i < n; i++)
        ps[i] = LLVMTypeOf(args[i]);
    LLVMValueRef fn = LLVMAddFunction(e->mod, EM_COLD_NAME,
                                      LLVMFunctionType(e->t_i32, ps, (unsigned)n, 0));
    unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(e->ctx, noinline, 0));
    begin_function(e, fn, 1 + nv, nb, &out);
    for (int id = 0, k = 1; id < f->n_vars; id++) {
        if (!from_outside(&c, id, out.var[id]))
            continue;
        LLVMValueRef p = LLVMGetParam(fn, (unsigned)k++);
        e->var[id] = by_value(&c, id, out.var[id]) ? local_copy(e, p) : p;
    }
    for (int id = 0, k = 1 + nv; id < f->n_buffers; id++)
        if (c.bufs[id] && out.buf_data[id])
            e->buf_data[id] = LLVMGetParam(fn, (unsigned)k++);
    e->cold++;  /* loops inside stay in this function */
    em_serial_loop(e, s, LLVMGetParam(fn, 0), is_tail);
    e->cold--;
    LLVMBuildRet(e->b, em_i32(e, 0));
    LLVMBuildBr(e->ab, LLVMGetNextBasicBlock(LLVMGetFirstBasicBlock(fn)));
    restore(e, &out);
    /* called only when the loop runs at all: a vector loop's tail is mostly empty */
    LLVMBasicBlockRef call = new_block(e, "cold"), done = new_block(e, "cold_done");
    LLVMValueRef hi = em_expr(e, s->hi);
    if (LLVMTypeOf(lo) != LLVMTypeOf(hi))  /* a wide tail's start */
        hi = LLVMBuildSExt(e->b, hi, e->t_i64, "");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, lo, hi, ""), call, done);
    LLVMPositionBuilderAtEnd(e->b, call);
    return_on_failure(e, LLVMBuildCall2(e->b, LLVMGlobalGetValueType(fn), fn, args,
                                        (unsigned)n, ""));
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
    free(args);
    free(ps);
    free_captures(&c);
}
