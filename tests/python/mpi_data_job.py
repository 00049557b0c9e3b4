"""One rank of test_mpi.py's start-up reading check: one iteration of lenet on the LMDB in
argv[1], then the records this process read from LMDBs (probe, batches, any label scan)."""
import sys

import crossbow
import crossbow.world
from crossbow import _native

crossbow.Trainer(net="lenet", train_db=sys.argv[1], batch_size=4, learners=1, iterations=1,
                 workers=1, progress=False, num_classes=10).fit()
print(f"RECORDS_READ rank {crossbow.world.rank()} {_native.load().records_read()}", flush=True)
