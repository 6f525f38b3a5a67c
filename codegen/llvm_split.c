/* The LLVM side of a split compile (split.h): each module keeps only its own pieces' code,
 * and the pieces are measured in LLVM instructions before they are dealt out. */
#include "codegen/llvm_internal.h"

#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

/* fn becomes a declaration of the same name and type (its code lives in another module). */
static void make_declaration(LLVMModuleRef mod, LLVMValueRef fn)
{
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    char *kept = pf_xmalloc(len + 1);
    memcpy(kept, name, len + 1);
    LLVMValueRef decl = LLVMAddFunction(mod, "", LLVMGlobalGetValueType(fn));
    LLVMReplaceAllUsesWith(fn, decl);
    LLVMDeleteFunction(fn);
    LLVMSetValueName2(decl, kept, len);
    free(kept);
}

/* Deletes internal functions nothing calls any more, until none is left. */
static void delete_unused_internal(LLVMModuleRef mod)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (LLVMValueRef fn = LLVMGetFirstFunction(mod), next; fn; fn = next) {
            next = LLVMGetNextFunction(fn);
            if (!LLVMIsDeclaration(fn) && LLVMGetLinkage(fn) == LLVMInternalLinkage &&
                !LLVMGetFirstUse(fn)) {
                LLVMDeleteFunction(fn);
                changed = true;
            }
        }
    }
}

/* Keeps only module m's code: other modules' pieces become declarations, the entry point
 * stays in module 0, and what only the removed code called goes. */
static void keep_module(emit *e, int m, LLVMValueRef entry)
{
    for (int i = 0; i < e->n_owned; i++)
        if (e->owned[i].module != m)
            make_declaration(e->mod, e->owned[i].fn);
    if (m != 0)
        LLVMDeleteFunction(entry);
    delete_unused_internal(e->mod);
}

LLVMModuleRef pf_llvm_emit_part(const ir_func *f, LLVMContextRef ctx, const char *name,
                                const pf_split *split, int module, bool vector_math,
                                pf_error *err)
{
    emit e = { 0 };
    e.scalar_math = !vector_math;
    LLVMValueRef entry = em_module(&e, f, ctx, name, split, err);
    if (!entry)
        return NULL;
    if (e.split)
        keep_module(&e, module, entry);
    free(e.owned);
    return e.mod;
}

/* Functions already counted, by address (a handful per module). */
typedef struct fn_set {
    LLVMValueRef *fn;
    int n, cap;
} fn_set;

/* What a vector instruction counts for against a scalar one: LLVM compiles the vector bodies'
 * straight-line code faster, per instruction, than the scalar address arithmetic and control
 * around it and in border copies. Counted alike, the bilateral grid's two modules took 130 and
 * 68 ms (module 1 holding its vectorized slice); at a half, 90 and 61 ms, and the compile
 * 122 -> 99 and 151 -> 119 ms in alternating runs (2026-11-26). Blur, unsharp, demosaic: no
 * change beyond noise. */
#define VECTOR_WEIGHT 0.5

/* Instructions (a vector one as VECTOR_WEIGHT) of fn and of the internal functions only
 * reachable through it (a parallel loop's task and chunk functions, cold loops). Pieces are
 * external: each is counted on its own. */
static double claim(LLVMValueRef fn, fn_set *seen)
{
    for (int i = 0; i < seen->n; i++)
        if (seen->fn[i] == fn)
            return 0;
    if (seen->n == seen->cap) {
        seen->cap = seen->cap ? 2 * seen->cap : 16;
        seen->fn = pf_xrealloc(seen->fn, sizeof *seen->fn * (size_t)seen->cap);
    }
    seen->fn[seen->n++] = fn;
    double n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
            n += LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMVectorTypeKind ? VECTOR_WEIGHT : 1.0;
            for (int k = 0; k < LLVMGetNumOperands(in); k++) {
                LLVMValueRef op = LLVMGetOperand(in, (unsigned)k);
                if (op && LLVMIsAFunction(op) && !LLVMIsDeclaration(op) &&
                    LLVMGetLinkage(op) == LLVMInternalLinkage)
                    n += claim(op, seen);
            }
        }
    return n;
}

int pf_llvm_measure_pieces(const ir_func *f, pf_split *p, bool vector_math, pf_error *err)
{
    if (p->n_modules < 2)
        return 0;
    LLVMContextRef ctx = LLVMContextCreate();
    emit e = { 0 };
    e.scalar_math = !vector_math;
    LLVMValueRef entry = em_module(&e, f, ctx, "pf_pipeline", p, err);
    if (entry) {
        fn_set seen = { 0 };
        for (int i = 0; i < e.n_owned; i++)
            p->piece[e.owned[i].piece].cost = claim(e.owned[i].fn, &seen);
        p->load[0] = claim(entry, &seen);
        free(seen.fn);
        free(e.owned);
        LLVMDisposeModule(e.mod);
    }
    LLVMContextDispose(ctx);
    return entry ? 0 : -1;
}

