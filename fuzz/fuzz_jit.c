/* libFuzzer target: generated programs and schedules through the JIT and the interpreter
 * (the oracle is in jit_oracle.h). Built by fuzz/CMakeLists.txt (PF_FUZZ), run by
 * fuzz/run.sh --target jit. */
#include "fuzz/jit_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* PF_FUZZ_GPU=1: the oracle's GPU mode (GPU genes and plans, run on the CPU). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int gpu = -1;
    if (gpu < 0)
        gpu = getenv("PF_FUZZ_GPU") != NULL;
    jo_oracle_run_on(data, size, gpu);
    return 0;
}
