"""Whether this process is one rank of an MPI job, from mpirun's environment (MPI itself starts
in C++, and only then): ``crossbow train`` under ``mpirun -np N`` runs one rank per process."""
import os

_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")
_RANK = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")
_LOCAL_RANK = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK")


def _first(names):
    for name in names:
        value = os.environ.get(name)
        if value:
            return int(value)
    return None


def under_mpirun():
    """True when mpirun started this process as one of several ranks."""
    return (_first(_SIZE) or 1) > 1


def size():
    """The ranks of the MPI job (1 when not under mpirun)."""
    return _first(_SIZE) or 1


def rank():
    """This process's rank (0 when not under mpirun)."""
    return _first(_RANK) or 0 if under_mpirun() else 0


def local_rank():
    """This rank's place among the ranks on its machine (0 when not under mpirun): the GPU
    that ``--devices cuda:local`` gives it."""
    return _first(_LOCAL_RANK) or 0
