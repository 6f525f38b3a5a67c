/* Whether an MPI launcher started this process (cluster/mpi.h), read from the environment
 * before MPI_Init, in every build (with or without MPI). */
#include "cluster/mpi.h"

#include <stdlib.h>

int pf_mpi_launched_size(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    return 0;
}
