/* An exported library's build files: CMakeLists.txt and a Makefile (static and shared builds of
 * the same objects, with or without the LLVM object), NAME.pc for pkg-config, and README.md.
 * Nothing in them needs perfora, LLVM or Z3: a C11 compiler, libm and pthreads. */
#include "results/export_internal.h"

#include <stdio.h>
#include <string.h>

/* The architecture the object is for: the triple's first part. */
static void arch_of(const char *triple, char *out, size_t n)
{
    size_t k = strcspn(triple, "-");
    snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), triple);
}

void pf_export_cmake(const pf_export_target *t, pf_strbuf *out)
{
    const char *n = t->name;
    char up[80], arch[64];
    pf_export_upper(n, up, sizeof up);
    arch_of(t->triple, arch, sizeof arch);
    pf_sb_printf(out, "# %s: a perfora variant as a C library (README.md). Static by default; "
                 "shared with\n# -DBUILD_SHARED_LIBS=ON. Needs a C11 compiler, libm and "
                 "pthreads only%s.\ncmake_minimum_required(VERSION 3.13)\nproject(%s C)\n\n", n,
                 t->cuda ? " (and libdl; the CUDA driver is loaded at run time)" : "", n);
    if (t->object)
        pf_sb_printf(out, "option(%s_AOT \"link %s_aot.o, compiled by LLVM for %s (%s); used "
                     "only on CPUs with its features\" ON)\nif(%s_AOT AND NOT "
                     "CMAKE_SYSTEM_PROCESSOR MATCHES \"^(%s|AMD64)$\")\n  message(STATUS "
                     "\"%s: %s_aot.o is for %s, not ${CMAKE_SYSTEM_PROCESSOR}: C source "
                     "only\")\n  set(%s_AOT OFF)\nendif()\n", up, n, t->cpu, arch, up, arch, n,
                     n, arch, up);
    pf_sb_printf(out, "if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)\n"
                 "  set(CMAKE_BUILD_TYPE Release)\nendif()\nfind_package(Threads REQUIRED)\n\n"
                 "add_library(%s %s.c %s%s.c %s.c)\n", n, n, n, t->cuda ? "_host" : "_pipeline",
                 t->cuda ? "perfora_cuda_rt" : "perfora_rt");
    if (t->object)
        pf_sb_printf(out, "if(%s_AOT)\n  target_sources(%s PRIVATE "
                     "${CMAKE_CURRENT_SOURCE_DIR}/%s_aot.o)\n  target_compile_definitions(%s "
                     "PRIVATE %s_AOT=1)\nendif()\n", up, n, n, n, up);
    pf_sb_printf(out, "set_target_properties(%s PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON "
                 "C_EXTENSIONS OFF\n  C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON "
                 "PUBLIC_HEADER %s.h)\n# The generated code's float results assume no "
                 "contraction into fused multiply-adds.\nif(CMAKE_C_COMPILER_ID MATCHES "
                 "\"GNU|Clang\")\n  target_compile_options(%s PRIVATE -ffp-contract=off)\n"
                 "endif()\ntarget_include_directories(%s PUBLIC "
                 "$<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}> $<INSTALL_INTERFACE:include>)\n"
                 "target_link_libraries(%s PRIVATE Threads::Threads m%s)\n\n", n, n, n, n, n,
                 t->cuda ? " ${CMAKE_DL_LIBS}" : "");
    pf_sb_printf(out, "install(TARGETS %s ARCHIVE DESTINATION lib LIBRARY DESTINATION lib\n"
                 "  PUBLIC_HEADER DESTINATION include)\n"
                 "file(READ ${CMAKE_CURRENT_SOURCE_DIR}/%s.pc pc)\n"
                 "string(REGEX REPLACE \"^prefix=[^\\n]*\" \"prefix=${CMAKE_INSTALL_PREFIX}\" "
                 "pc \"${pc}\")\nfile(WRITE ${CMAKE_CURRENT_BINARY_DIR}/%s.pc \"${pc}\")\n"
                 "install(FILES ${CMAKE_CURRENT_BINARY_DIR}/%s.pc DESTINATION lib/pkgconfig)\n",
                 n, n, n, n);
}

void pf_export_makefile(const pf_export_target *t, pf_strbuf *out)
{
    const char *n = t->name, *rt = t->cuda ? "perfora_cuda_rt" : "perfora_rt";
    char up[80];
    pf_export_upper(n, up, sizeof up);
    pf_sb_printf(out, "# %s: a perfora variant as a C library (README.md).\n"
                 "#   make                  $(BUILD)/lib%s.a and $(BUILD)/lib%s.so\n"
                 "#   make AOT=0            without %s_aot.o (the C source only)\n"
                 "#   make install PREFIX=/usr/local\n"
                 "CC ?= cc\nAR ?= ar\nCFLAGS ?= -O3\nPREFIX ?= /usr/local\nAOT ?= %d\n"
                 "BUILD ?= build\n\n", n, n, n, n, t->object ? 1 : 0);
    pf_sb_printf(out, "XCFLAGS = -std=c11 -ffp-contract=off -fPIC -fvisibility=hidden "
                 "-pthread\nOBJS = $(BUILD)/%s.o $(BUILD)/%s%s.o $(BUILD)/%s.o\n"
                 "ifeq ($(AOT),1)\nOBJS += %s_aot.o\nXCFLAGS += -D%s_AOT=1\nendif\n\n"
                 "all: $(BUILD)/lib%s.a $(BUILD)/lib%s.so\n\n", n, n,
                 t->cuda ? "_host" : "_pipeline", rt, n, up, n, n);
    pf_sb_printf(out, "$(BUILD)/%%.o: %%.c %s.h %s%s %s.h | $(BUILD)\n"
                 "\t$(CC) $(XCFLAGS) $(CPPFLAGS) $(CFLAGS) -c $< -o $@\n\n"
                 "$(BUILD):\n\tmkdir -p $(BUILD)\n\n"
                 "$(BUILD)/lib%s.a: $(OBJS)\n\trm -f $@\n\t$(AR) rcs $@ $(OBJS)\n\n"
                 "$(BUILD)/lib%s.so: $(OBJS)\n\t$(CC) -shared -pthread -Wl,-soname,lib%s.so "
                 "$(LDFLAGS) -o $@ $(OBJS) -lm%s\n\n", n, t->cuda ? "" : n,
                 t->cuda ? "" : "_pipeline.h", rt, n, n, n, t->cuda ? " -ldl" : "");
    pf_sb_printf(out, "install: all\n\tinstall -d $(DESTDIR)$(PREFIX)/lib/pkgconfig "
                 "$(DESTDIR)$(PREFIX)/include\n"
                 "\tinstall -m 644 $(BUILD)/lib%s.a $(DESTDIR)$(PREFIX)/lib/\n"
                 "\tinstall -m 755 $(BUILD)/lib%s.so $(DESTDIR)$(PREFIX)/lib/\n"
                 "\tinstall -m 644 %s.h $(DESTDIR)$(PREFIX)/include/\n"
                 "\tsed '1s|^prefix=.*|prefix=$(PREFIX)|' %s.pc > "
                 "$(DESTDIR)$(PREFIX)/lib/pkgconfig/%s.pc\n\n"
                 "clean:\n\trm -rf $(BUILD)\n\n.PHONY: all install clean\n", n, n, n, n, n);
}

void pf_export_pc(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out)
{
    pf_sb_printf(out, "prefix=/usr/local\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\n"
                 "Name: %s\nDescription: pipeline %s, a variant exported by perfora %s\n"
                 "Version: 1.0\nLibs: -L${libdir} -l%s\nLibs.private: -lm -pthread%s\n"
                 "Cflags: -I${includedir}\n", t->name, s->prog->name, PF_VERSION, t->name,
                 t->cuda ? " -ldl" : "");
}

static void readme_code(const pf_export_target *t, pf_strbuf *out)
{
    const char *n = t->name;
    char up[80];
    pf_export_upper(n, up, sizeof up);
    pf_sb_puts(out, "## The code\n\n");
    if (t->cuda) {
        pf_sb_printf(out, "A GPU variant: `%s_host.c` holds the PTX of its %d CUDA kernel%s "
                     "(for %s; the driver compiles it for the GPU at the first call, any GPU of "
                     "compute capability 8.0 or newer) and the host code perfora generated from "
                     "the variant's loop IR: for the images' extents it computes each launch's "
                     "grid, block, shared memory and parameters (once per extents; later calls "
                     "of the same extents replay them). `perfora_cuda_rt.c` calls the CUDA "
                     "driver API, loading `libcuda.so.1` with `dlopen` at the first call "
                     "(`$PF_CUDA_DRIVER` names another file): the library builds, links and "
                     "loads on machines without CUDA, and a call there returns "
                     "`%s_ERROR_NO_DEVICE` with the reason in `%s_last_error()`.\n\n",
                     n, t->kernels, t->kernels == 1 ? "" : "s", t->gpu_arch, up, n);
        return;
    }
    if (!t->object) {
        pf_sb_printf(out, "`%s_pipeline.c` is perfora's C backend's source of the variant, "
                     "compiled by your compiler (exported without an LLVM object).\n\n", n);
        return;
    }
    pf_sb_printf(out, "- `%s_aot.o`: the LLVM module perfora's JIT compiles for this variant, "
                 "compiled ahead of time by LLVM with the JIT's passes, **for the CPU of the "
                 "machine that exported it: `%s` (%s)**, position-independent: the JIT's code "
                 "(perfora's bench_export times the two).\n"
                 "- `%s_pipeline.c`: the same variant as C source from perfora's C backend, "
                 "portable (compiled without `-march`), possibly slower.\n\n"
                 "`%s.c` checks once, with `__builtin_cpu_supports`, that the running CPU has "
                 "the features the object uses (listed in `%s.h`), and runs the C source where "
                 "it has not; `%s_uses_object()` says which. `-D%s_AOT=OFF` (CMake) or `AOT=0` "
                 "(make) leaves the object out, e.g. on another architecture (CMake does so by "
                 "itself there).\n\n", n, t->cpu, t->triple, n, n, n, n, up);
}

void pf_export_readme(const pf_export_source *s, const pf_export_target *t, pf_strbuf *out)
{
    const char *n = t->name;
    char up[80];
    pf_export_upper(n, up, sizeof up);
    pf_sb_printf(out, "# %s\n\nPipeline `%s` (`%s`), one variant exported by perfora %s from "
                 "%s. `%s.h` holds the schedule, what the search measured, the parameters "
                 "(fixed at export) and the function's documentation; `%s.sched` the schedule "
                 "as perfora reads it.\n\n", n, s->prog->name, s->prog->file_name, PF_VERSION,
                 s->origin, n, n);
    pf_sb_printf(out, "## Build\n\nA C11 compiler, libm and pthreads; nothing of perfora, LLVM "
                 "or Z3.\n\n```sh\ncmake -S . -B build && cmake --build build            # "
                 "static lib%s.a\ncmake -S . -B build-so -DBUILD_SHARED_LIBS=ON && cmake --build "
                 "build-so  # shared\nmake                # build/lib%s.a and build/lib%s.so\n"
                 "make install PREFIX=$HOME/.local   # or cmake --install build --prefix ...\n"
                 "```\n\npkg-config: `cc app.c $(pkg-config --cflags --libs %s)` once "
                 "installed (`--static` for the static library).\n\n", n, n, n, n);
    readme_code(t, out);
    pf_sb_printf(out, "## Call\n\n```c\n#include \"%s.h\"\n\n/* an RGB image of W x H, rows "
                 "contiguous, values 0..1 */\nint64_t ext[3] = { W, H, 3 }, str[3] = { 1, W, "
                 "(int64_t)W * H };\nint rc = %s(in, ext, str, out, ext, str, 0 /* threads: "
                 "%s */);\nif (rc != %s_OK)\n    fprintf(stderr, \"%%s\\n\", "
                 "%s_error_string(rc));\n```\n\n", n, n,
                 t->cuda ? "unused on the GPU" : "one per core", up, n);
    if (t->cuda)
        pf_sb_printf(out, "On the GPU: each call uploads the inputs, runs the kernels and "
                     "downloads the outputs; the library keeps its device memory (copies of the "
                     "images, intermediate images) between calls, `%s_release()` frees it. "
                     "`%s_device()` takes device addresses instead (e.g. from `cudaMalloc`: "
                     "the library uses device 0's primary context, the CUDA runtime's) of "
                     "packed images and runs only the kernels, so images can stay on the GPU "
                     "across calls. `%s_last_times()` gives the last call's kernel time (CUDA "
                     "events) and, apart, its transfers (host clock). The transfers matter: "
                     "perfora's own CUDA backend, which moves images the same way, measured "
                     "4.7-6.4 ms up and 2.6-3.8 ms down for a 2048x1536 RGB image on an H100, "
                     "more than the kernels of most of its example pipelines.\n\n", n, n, n);
    pf_sb_printf(out, "The arguments follow the pipeline's images in order (see `%s.h` for "
                 "their extents). Strides are in floats; stride[0] must be 1.\n\n"
                 "## Limits\n\n- The parameters are compiled in; export again for other "
                 "values.\n%s- The static library carries perfora's runtime under its own "
                 "names (%s): link two libraries exported by different perfora versions into "
                 "one program as shared libraries (which keep the runtime hidden).\n", n,
                 t->cuda ? "- On the GPU, calls from several threads take turns (one lock); "
                           "the threads argument is unused. The library uses device 0.\n"
                         : "- The thread count sets one pool for the whole library: concurrent "
                           "callers should pass the same value.\n",
                 t->cuda ? "`pf_crt_*`, `pf_cuda_*`, `pf_fail*`" : "`pf_rt_*`, `pf_srt_*`");
}
