"""MPI ranks, started by the launcher's mpirun inside the worker replicas.

Each rank reports the replica it runs in (the worker's HOSTNAME, which only
the replica's own environment carries), sums its rank over an allreduce,
and rank 0 checks that every rank ran in a different worker and that the
sum is right. Exits non-zero otherwise.
"""
import os
import sys

from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    replica = os.environ.get("HOSTNAME", "?")
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    print(f"rank {rank}/{size} in replica {replica}: allreduce sum {total}", flush=True)
    replicas = comm.gather(replica, root=0)
    if rank == 0:
        ok = total == size * (size + 1) // 2 and len(set(replicas)) == size and all(
            "-worker-" in r for r in replicas)
        print(f"{size} ranks in {sorted(replicas)}: {'ok' if ok else 'WRONG'}", flush=True)
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()
