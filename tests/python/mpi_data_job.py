"""One rank of test_mpi.py's start-up reading check: one iteration of lenet on the LMDB in
argv[1], then the records this process read from LMDBs (probe, batches, any label scan),
written to argv[2]/rank<N>: mpirun interleaves the ranks' standard output, so a printed count
can arrive glued to the other rank's line."""
import os
import sys

import crossbow
import crossbow.world
from crossbow import _native

crossbow.Trainer(net="lenet", train_db=sys.argv[1], batch_size=4, learners=1, iterations=1,
                 workers=1, progress=False, num_classes=10).fit()
with open(os.path.join(sys.argv[2], f"rank{crossbow.world.rank()}"), "w") as out:
    out.write(str(_native.load().records_read()))
