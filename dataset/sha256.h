/* SHA-256 (FIPS 180-4), for the benchmark manifest's checksums of source and output files: a
 * small self-contained implementation so the dataset module needs no crypto library. */
#ifndef PF_DATASET_SHA256_H
#define PF_DATASET_SHA256_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pf_sha256 {
    uint32_t h[8];
    uint64_t total;           /* bytes fed so far */
    unsigned char block[64];  /* pending partial block */
    size_t fill;
} pf_sha256;

void pf_sha256_init(pf_sha256 *s);
void pf_sha256_update(pf_sha256 *s, const void *data, size_t len);
/* Writes the 64 lower-case hex digits and a NUL into hex[65]. */
void pf_sha256_final_hex(pf_sha256 *s, char hex[65]);

void pf_sha256_hex(const void *data, size_t len, char hex[65]);
/* Hashes a whole file; errors name the file. */
int pf_sha256_file(const char *path, char hex[65], pf_error *err);

#endif
