/* The host side of a CUDA variant without a device (codegen/gpu_host.h, docs/gpu.md): the
 * launches the host walk makes for an app's default GPU schedule, each a kernel of the PTX
 * (gpu_ptx.h), with the grid, block and shared memory the IR implies, the whole internal images
 * allocated, and a clear refusal of a runtime call the GPU does not run yet. */
#include "tests/codegen/codegen_util.h"
#include "tests/harness/harness.h"

#include "codegen/gpu_host.h"
#include "codegen/gpu_ptx.h"
#include "reconstruct/stage_rt.h"

#include <stdio.h>
#include <string.h>

typedef struct recorder {
    int n;
    pf_gpu_launch l[16];
    int allocs, zeros;
    size_t alloc_bytes;
    int n_calls;
    pf_gpu_rtcall calls[8];  /* their statements die with the IR: see rt, reads, writes */
    ir_rt rt[8];
    unsigned reads[8], writes[8];  /* bit i: the call reads, writes its buffer i */
} recorder;

static int rec_alloc(void *ctx, const ir_buffer *b, size_t bytes, bool zero, pf_error *err)
{
    (void)b, (void)err;
    recorder *r = ctx;
    r->allocs++;
    r->zeros += zero;
    r->alloc_bytes += bytes;
    return 0;
}

static int rec_zero(void *ctx, const ir_buffer *b, pf_error *err)
{
    (void)b, (void)err;
    ((recorder *)ctx)->zeros++;
    return 0;
}

static void rec_release(void *ctx, const ir_buffer *b)
{
    (void)ctx, (void)b;
}

static int rec_launch(void *ctx, const pf_gpu_launch *l, pf_error *err)
{
    (void)err;
    recorder *r = ctx;
    if (r->n < 16)
        r->l[r->n] = *l;
    r->n++;
    return 0;
}

static int rec_rtcall(void *ctx, const pf_gpu_rtcall *c, pf_error *err)
{
    (void)err;
    recorder *r = ctx;
    int k = r->n_calls++;
    if (k >= 8)
        return 0;
    r->calls[k] = *c;
    r->rt[k] = c->s->rt;
    for (int i = 0; i < c->s->n_bufs; i++) {
        r->reads[k] |= (unsigned)pf_gpu_rtcall_reads(c->s, i) << i;
        r->writes[k] |= (unsigned)pf_gpu_rtcall_writes(c->s, i) << i;
    }
    return 0;
}

/* The launches of app under schedule (on the GPU target) for a W x H x 3 input; also checks
 * that each launches a kernel of the PTX. Returns pf_gpu_host_run's result (message in err). */
static int launches(const char *app, const char *schedule, int w, int h, recorder *r,
                    pf_error *err)
{
    pf_program *prog = cg_load_app(app);
    pf_param_values params;
    pf_params_init(&params, prog);
    pf_plan_target t = pf_backend_plan_target(PF_BACKEND_CUDA);
    pf_plan *plan = pf_plan_parse(prog, schedule, "<test>", &t, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = pf_variant_loop_ir(prog, &params, plan, &arena, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int64_t ext[2 * CG_MAX_IO][IR_MAX_DIMS];  /* every argument, inputs then outputs */
    for (int i = 0; i < 2 * CG_MAX_IO; i++) {
        ext[i][0] = w;
        ext[i][1] = h;
        ext[i][2] = 3;
        ext[i][3] = 1;
    }
    memset(r, 0, sizeof *r);
    pf_gpu_host_ops ops = { r, rec_alloc, rec_release, rec_zero, rec_launch, rec_rtcall };
    int rc = pf_gpu_host_run(f, (const int64_t(*)[IR_MAX_DIMS])ext, &ops, err);
    pf_gpu_module m;
    pf_error perr;
    char lib[1024];
    if (pf_gpu_emit_ptx(f, NULL, &m, &perr) != 0) {  /* math without libdevice: SKIP */
        printf("\n    SKIP (kernel names) %s: %s", app, perr.msg);
        CU_ASSERT(strstr(perr.msg, "libdevice") && !pf_gpu_libdevice_path(lib, sizeof lib));
    }
    for (int i = 0; i < r->n && i < 16 && m.ptx; i++) {
        bool found = false;
        for (int k = 0; k < m.n_kernels; k++)
            found = found || m.kernels[k].nest == r->l[i].nest;
        CU_ASSERT(found);
    }
    pf_gpu_module_free(&m);
    pf_arena_free(&arena);
    pf_plan_free(plan);
    pf_params_free(&params);
    pf_program_free(prog);
    return rc;
}

static void expect(const pf_gpu_launch *l, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, size_t shared)
{
    printf("\n    grid %u x %u x %u, block %u x %u x %u, %zu bytes shared", l->grid[0],
           l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->shared_bytes);
    CU_ASSERT_EQUAL(l->grid[0], gx);
    CU_ASSERT_EQUAL(l->grid[1], gy);
    CU_ASSERT_EQUAL(l->grid[2], gz);
    CU_ASSERT_EQUAL(l->block[0], bx);
    CU_ASSERT_EQUAL(l->block[1], by);
    CU_ASSERT_EQUAL(l->block[2], 1);
    CU_ASSERT_EQUAL(l->shared_bytes, shared);
}

/* blur: one kernel, 64x64 tiles of 64x4 threads, temp's window 64 x (64 + 16) floats in shared
 * memory, also on 97x61, where the image clips every block's region (61 rows): the window's
 * size is the constant bound of the region's (codegen/lower_at.c, span_bound). */
static void test_blur_launch(void)
{
    recorder r;
    pf_error err;
    CU_ASSERT_EQUAL_FATAL(launches("blur", "", 2048, 1536, &r, &err), 0);
    CU_ASSERT_EQUAL_FATAL(r.n, 1);
    expect(&r.l[0], 32, 24, 3, 64, 4, 64 * 80 * 4);
    CU_ASSERT_EQUAL(r.allocs, 0);
    CU_ASSERT_EQUAL_FATAL(launches("blur", "", 97, 61, &r, &err), 0);
    CU_ASSERT_EQUAL_FATAL(r.n, 1);
    expect(&r.l[0], 2, 1, 3, 64, 4, 64 * 80 * 4);
    /* a hand schedule: 32x8 tiles, 32x8 threads, temp through global memory */
    CU_ASSERT_EQUAL_FATAL(launches("blur", "loop_temp exec tile 32 8 gpu\n"
                                           "loop_output exec tile 32 8 gpu\n", 2048, 1536, &r,
                                   &err), 0);
    CU_ASSERT_EQUAL_FATAL(r.n, 2);
    expect(&r.l[0], 64, 192, 3, 32, 8, 0);
    CU_ASSERT_EQUAL(r.allocs, 1);
    CU_ASSERT_EQUAL(r.alloc_bytes, (size_t)2048 * 1536 * 3 * 4);
    /* the output on a 4x4 grid: a block's 64x64 samples span 256 x 256 pixels, temp's
     * region 256 x 272 floats (272 KiB, more than a block's shared memory): no constant
     * size, the window clipped by the image as before, so small images still run (on an
     * H200 the constant size made this plan fail to launch at 97x61) */
    CU_ASSERT_EQUAL_FATAL(launches("blur", "loop_output grid 4 4 1 reconstruct store linear\n",
                                   97, 61, &r, &err), 0);
    CU_ASSERT_FATAL(r.n >= 1);
    expect(&r.l[0], 1, 1, 3, 64, 4, 97 * 61 * 4);
}

/* Every app's default GPU schedule walks to its end, with no kernel of one thread: the
 * bilateral grid's serial splat runs a pixel a thread (atomic adds), 32x8 blocks. */
static void test_every_app_walks(void)
{
    static const char *const apps[] = { "unsharp_mask", "bilateral_filter", "bilateral_grid",
                                        "demosaic", "mosaic", "median", "artistic_blur" };
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        recorder r;
        pf_error err;
        int rc = launches(apps[a], "", 256, 192, &r, &err);
        if (rc)
            printf("\n    %s: %s", apps[a], err.msg);
        CU_ASSERT_EQUAL(rc, 0);
        int single = 0;
        for (int i = 0; i < r.n; i++)
            single += r.l[i].grid[0] * r.l[i].grid[1] * r.l[i].grid[2] == 1 &&
                      r.l[i].block[0] * r.l[i].block[1] == 1;
        printf("\n    %-16s %d launches, %d of one thread, %d images allocated, %d zeroed",
               apps[a], r.n, single, r.allocs, r.zeros);
        CU_ASSERT(r.n >= 1);
        CU_ASSERT_EQUAL(single, 0);
        if (strcmp(apps[a], "bilateral_grid") == 0 && r.n > 1)
            expect(&r.l[1], 8, 24, 1, 32, 8, 0);  /* the splat over 256x192 pixels */
    }
}

/* A reconstruction the GPU does not run yet is refused by name. */
/* A reconstruction that is still a runtime call (gaussian-sv) is refused with its name; a grid
 * Gaussian is kernels (codegen/lower_gauss_gpu.c): the stages', the fill, 6 per axis (tiled),
 * the division, and its scratch planes and states allocated. */
static void test_runtime_call_refused(void)
{
    recorder r;
    pf_error err;
    int rc = launches("blur", "loop_temp grid 4 1 1 reconstruct store gaussian-sv 1\n", 97, 61,
                      &r, &err);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "runtime call reconstruct"));
    /* 197x141: lines of more than one tile of 64 along both axes (with a single tile along
     * an axis, the carry kernel has no block to launch) */
    rc = launches("blur", "loop_temp grid 4 1 1 reconstruct store gaussian 1\n", 197, 141, &r,
                  &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(r.n >= 15 && r.allocs >= 3);
    printf("\n    blur, temp on a grid with a Gaussian: %d launches, %d allocations", r.n,
           r.allocs);
}

/* Adaptive and importance sampling on the GPU: the coarse mask is a kernel; the refinement,
 * the importance mask and the reconstruction from those masks are calls the host runs, with
 * their arguments and buffers' layout (n1 x n2 mask planes, dense). */
static void test_mask_calls_on_host(void)
{
    static const struct { const char *schedule; ir_rt rt[2]; } cases[] = {
        { "loop_output adaptive 4 0.3 reconstruct store nearest\n",
          { IR_RT_ADAPTIVE_REFINE, IR_RT_RECONSTRUCT } },
        { "loop_output importance 0.3 0.1 reconstruct store gaussian-sv 0.8\n",
          { IR_RT_IMPORTANCE_MASK, IR_RT_RECONSTRUCT } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        recorder r;
        pf_error err;
        int rc = launches("blur", cases[i].schedule, 97, 61, &r, &err);
        if (rc)
            printf("\n    %s", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_EQUAL_FATAL(r.n_calls, 2);
        for (int k = 0; k < 2; k++) {
            const pf_gpu_rtcall *c = &r.calls[k];
            printf("\n    %s", ir_rt_name(r.rt[k]));
            CU_ASSERT_EQUAL(r.rt[k], cases[i].rt[k]);
            CU_ASSERT_EQUAL(c->extent[1][0], 97);  /* the mask plane */
            CU_ASSERT_EQUAL(c->extent[1][1], 61);
            CU_ASSERT_EQUAL(c->stride[1][1], 97);
        }
        /* the mask call writes mask and aux; the reconstruction reads all, writes the image */
        CU_ASSERT_EQUAL(r.writes[0], 6u);
        CU_ASSERT_EQUAL(r.reads[1], 7u);
        CU_ASSERT_EQUAL(r.writes[1], 1u);
        /* the image (97 x 61 x 3) and, for importance, the reference read whole */
        CU_ASSERT_EQUAL(r.calls[0].extent[0][2], 3);
        CU_ASSERT_EQUAL(r.calls[0].stride[0][2], 97 * 61);
        CU_ASSERT_EQUAL(r.reads[0], 1u);
        CU_ASSERT(r.n >= 2);  /* the stage's passes (and, adaptive, the coarse mask) */
    }
}

/* A call on host memory takes the lattice view the JIT passes (llvm_srt.c): refinement of
 * the view lo (1, 2), step (2, 1), n (4, 5) of a 9 x 7 x 2 image equals the runtime's on that
 * view built by hand. */
static void test_rtcall_view(void)
{
    pf_arena arena;
    pf_arena_init(&arena);
    ir_func *f = ir_func_new(&arena, "view");
    ir_buffer *bufs[3] = { ir_buffer_new(f, "img", IR_BUF_INTERNAL, 3),
                           ir_buffer_new(f, "mask", IR_BUF_INTERNAL, 2),
                           ir_buffer_new(f, "aux", IR_BUF_INTERNAL, 2) };
    ir_expr *none[1] = { NULL };
    ir_stmt *s = ir_rtcall(f, IR_RT_ADAPTIVE_REFINE, 3, bufs, 0, none);
    s->view_dims = 2;
    pf_gpu_rtcall c = { .s = s };
    const int64_t view[6] = { 1, 2, 4, 2, 1, 5 };  /* (lo, step, n) of x, then of y */
    for (int i = 0; i < 6; i++)
        c.args[i].i = view[i];
    c.args[6].i = 2;     /* k */
    c.args[7].f = 0.5f;  /* frac */
    int64_t ext[3] = { 9, 7, 2 };
    for (int d = 0, st = 1; d < 3; st *= (int)ext[d], d++) {
        c.extent[0][d] = ext[d];
        c.stride[0][d] = st;
    }
    for (int b = 1; b < 3; b++) {
        c.extent[b][0] = 4, c.extent[b][1] = 5;
        c.stride[b][0] = 1, c.stride[b][1] = 4;
    }
    float img[9 * 7 * 2], mask[20], aux[20], want_mask[20], want_aux[20];
    for (int i = 0; i < 9 * 7 * 2; i++)
        img[i] = (float)((i * 37) % 23) / 23.0f;
    float *data[3] = { img, mask, aux };
    pf_error err;
    CU_ASSERT_EQUAL(pf_gpu_rtcall_run(&c, data, &err), 0);
    pf_buffer v = { img + 1 + 2 * 9, 3, { 4, 5, 2, 1 }, { 2, 9, 63, 0 } };
    CU_ASSERT_EQUAL(pf_srt_adaptive_refine(&v, 2, 0.5f, want_mask, want_aux), 0);
    CU_ASSERT_EQUAL(memcmp(mask, want_mask, sizeof mask), 0);
    CU_ASSERT_EQUAL(memcmp(aux, want_aux, sizeof aux), 0);
    pf_arena_free(&arena);
}

PF_TEST_SUITE(codegen_gpu_host, PF_TEST(test_blur_launch), PF_TEST(test_every_app_walks),
              PF_TEST(test_runtime_call_refused), PF_TEST(test_mask_calls_on_host),
              PF_TEST(test_rtcall_view))
