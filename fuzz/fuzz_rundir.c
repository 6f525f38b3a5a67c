/* libFuzzer target: a run directory's config.json, checkpoint.json and evaluations.jsonl
 * through --resume (the oracle is in rundir_oracle.h). Built by fuzz/CMakeLists.txt
 * (PF_FUZZ), run by fuzz/run.sh --target rundir. With PF_FUZZ_MAKE_SEED=FILE it writes a
 * seed instead: the files of a real run (fake evaluator) after two generations. */
#include "fuzz/rundir_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static void make_seed(const char *out)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s.run", out);
    pf_tune_config cfg;
    pf_tune_config_default(&cfg);
    cfg.eval.program = pf_xstrdup(PF_SOURCE_DIR "/apps/blur.pf");
    cfg.eval.dataset = pf_xstrdup(PF_SOURCE_DIR "/data/images");
    cfg.ga.population = 6;
    cfg.ga.generations = 4;
    cfg.test = false;
    pf_error err;
    pf_tune *t = pf_tune_create(dir, &cfg, &err);
    if (!t)
        ro_fail("seed", err.msg);
    pf_evaluator *ev = ro_fake();
    pf_tune_hooks hooks = { .stop_after = 2 };
    if (pf_tune_run(t, ev, &hooks, &err) != 0)
        ro_fail("seed run", err.msg);
    pf_evaluator_destroy(ev);
    pf_tune_free(t);
    pf_strbuf sb;
    pf_sb_init(&sb);
    for (size_t i = 0; i < sizeof ro_files / sizeof *ro_files; i++) {
        char *path = pf_run_path(dir, ro_files[i]), *text;
        size_t len;
        if (pf_read_file(path, 1 << 24, &text, &len, &err) != 0)
            ro_fail("seed read", err.msg);
        if (i)
            pf_sb_printf(&sb, RO_SEP "%s\n", ro_files[i]);
        pf_sb_putn(&sb, text, len);
        free(text);
        free(path);
    }
    if (pf_write_file_atomic(out, sb.data, strlen(sb.data), &err) != 0)
        ro_fail("seed write", err.msg);
    pf_sb_free(&sb);
    pf_tune_config_free(&cfg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *seed = getenv("PF_FUZZ_MAKE_SEED");
    if (seed) {
        make_seed(seed);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ro_oracle_run(data, size);
    return 0;
}
