#!/bin/bash
# ResNet-32 bf16, one learner, one thread, batch 16, synthetic data: the builds in /tmp/amxc_<v>,
# rounds alternating. Prints images/s (wall clock, as the bench reports it) and images per CPU
# second of the whole process (warm-up and start-up included), which moves less with the load of
# the training runs sharing the two vCPUs.
# Usage: ab.sh ROUNDS VARIANT...
rounds=$1; shift
export OMP_NUM_THREADS=1
for r in $(seq 1 $rounds); do
  for v in "$@"; do
    out=$(LD_LIBRARY_PATH=/tmp/amxc_$v /usr/bin/time -f "cpu %U %S" /tmp/amxc_$v/crossbow_bench \
      --spec /tmp/amxc_r32.json --precision bf16 --batch_size 16 --learners 1 --devices cpu \
      --seconds 8 --warmup_iterations 10 2>&1)
    echo "$out" | python3 -c "
import sys, json
lines = sys.stdin.read().strip().splitlines()
j = json.loads([l for l in lines if l.startswith('{')][-1])
u, s = map(float, [l for l in lines if l.startswith('cpu ')][-1].split()[1:])
print('round $r $v images_per_s %.1f images_per_cpu_s %.1f' % (j['images_per_s'], j['images'] / (u + s)))"
  done
done
