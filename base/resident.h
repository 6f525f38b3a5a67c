/* The process's own resident memory: reading it, and handing back code pages that a finished
 * phase (LLVM's compile) touched and the rest of the run does not need. Linux only; elsewhere
 * the functions report nothing and drop nothing. */
#ifndef PF_BASE_RESIDENT_H
#define PF_BASE_RESIDENT_H

#include <stddef.h>

/* Resident bytes of the executable's code (its r-x mappings), or -1 when unknown. */
long long pf_resident_code_bytes(void);

/* Drops the executable's code pages from the resident set (madvise MADV_DONTNEED on its
 * read-only executable mappings). They are clean file pages: the next instruction fetched
 * from one maps it again from the page cache. Returns the bytes of code mapped (0 when none
 * could be found or the system has no such call). */
size_t pf_drop_code_pages(void);

#endif
