# Images/s of Crossbow's loader (the crossbow on PYTHONPATH) over N images after its first batch:
# ImageNet preset, random-resized crop of SIZE, one worker, full-resolution decode.
import sys, time
import crossbow
from crossbow.data import ImageDB
db = ImageDB(sys.argv[1], 64, preset="imagenet", input_size=int(sys.argv[2]), workers=1,
             reduced_decode=False)
source = db.source
source.next_batch()
start, seen = time.perf_counter(), 0
while seen < int(sys.argv[3]):
    seen += len(source.next_batch()[1])
print(crossbow.__file__, seen / (time.perf_counter() - start))
