/* cluster/mpi.h in a build without MPI (PF_MPI=off): perfora runs the local pool, and says so
 * clearly when an MPI launcher started it. */
#include "cluster/mpi.h"

#include <stdlib.h>

pf_mpi *pf_mpi_start(pf_error *err)
{
    pf_fail(err, "this perfora was built without MPI (PF_MPI=off): run it without mpirun, or "
            "rebuild with -DPF_MPI=openmpi or mpich");
    return NULL;
}

int pf_mpi_rank(const pf_mpi *m)
{
    (void)m;
    return 0;
}

int pf_mpi_size(const pf_mpi *m)
{
    (void)m;
    return 1;
}

pf_evaluator *pf_mpi_master_new(pf_mpi *m, const pf_eval_config *cfg, const char *run_dir,
                                const pf_mpi_options *opt, pf_error *err)
{
    (void)m;
    (void)cfg;
    (void)run_dir;
    (void)opt;
    pf_fail(err, "built without MPI");
    return NULL;
}

int pf_mpi_master_close(pf_evaluator *ev)
{
    (void)ev;
    return 0;
}

int pf_mpi_worker_run(pf_mpi *m, pf_error *err)
{
    (void)m;
    return pf_fail(err, "built without MPI");
}

void pf_mpi_end(pf_mpi *m, bool lost)
{
    (void)m;
    (void)lost;
}

_Noreturn void pf_mpi_abort(pf_mpi *m, int status)
{
    (void)m;
    exit(status);
}
