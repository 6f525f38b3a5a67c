/* libFuzzer target for the front end: arbitrary bytes through parse, check, print, reparse
 * and bind (the oracle is in frontend_oracle.h). Built and run by fuzz/run.sh. */
#include "fuzz/frontend_oracle.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pf_oracle_run(data, size);
    return 0;
}
