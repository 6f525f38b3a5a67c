/* libFuzzer target: generated programs and schedules through the JIT and the interpreter
 * (the oracle is in jit_oracle.h). Built by fuzz/CMakeLists.txt (PF_FUZZ), run by
 * fuzz/run.sh --target jit. */
#include "fuzz/jit_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jo_oracle_run(data, size);
    return 0;
}
