/*
 * dist_mpi.h - the Open MPI implementation of the distributed runtime
 * table (core/dist.h). Reached from the public dist functions only.
 */
#ifndef LT_BACKEND_DIST_MPI_H
#define LT_BACKEND_DIST_MPI_H

#include "core/dist.h"

/* True when an MPI launcher (Open MPI's mpirun, or a PMIx launcher such as
 * srun) started this process: read from its environment, without MPI. */
bool lt_dist_mpi_launched(void);
/* Loads Open MPI, initializes it and returns its table. */
lt_status lt_dist_mpi_open(const lt_dist_rt **out);
/* The collective timeout in seconds (LT_DIST_TIMEOUT, default 120). */
double lt_dist_mpi_timeout(void);

#endif
