"""One rank of the MPI tests' training job (test_mpi.py runs it under mpirun, or alone with
in-process devices): lenet on fixed random arrays; options as JSON in argv[1]."""
import json
import sys

import numpy as np

import crossbow
import crossbow.world

options = dict(batch_size=4, learners=1, iterations=6, lr=0.05, progress=False, log_every=2)
options.update(json.loads(sys.argv[1]))
rng = np.random.default_rng(0)
labels = (np.arange(96) % 10).astype(np.int32)
images = rng.normal(0, 0.5, (96, 1, 28, 28)).astype(np.float32)
images[np.arange(96), 0, labels, :] += 2.0
result = crossbow.Trainer(net="lenet", train_db=(images, labels), **options).fit()
if crossbow.world.rank() == 0:
    print("RESULT " + json.dumps(result), flush=True)
