"""One rank of a torchrun-style job for test_distributed.py: rank and
world size from RANK / WORLD_SIZE; resumes from the checkpoint
directory LOAD_FROM if it holds states; after `stop` batches saves its
input state into SAVE_TO (a file per rank; a job saves each checkpoint
into a new directory, never into the one it may be resuming from) and dies without cleaning up, as a killed job would;
writes the ids of every batch it trained on to OUT."""

import json
import os
import sys

import feedstock as fs
from feedstock import distributed as fsd

files, settings, load_from, save_to, out, stop = json.loads(sys.argv[1])
pipe = fsd.sharded_pipeline(files, features={"id": fs.FixedLenFeature([], fs.int64)}, **settings)
resumed = fsd.load_input_state(pipe, load_from)
batches = []
for batch in pipe:
    batches.append(batch["id"].tolist())
    if stop is not None and len(batches) == stop:
        fsd.save_input_state(pipe, save_to)
        break
with open(out, "w") as f:
    json.dump({"resumed": resumed, "batches": batches, "rank": fsd.rank_and_world()[0]}, f)
    f.flush()
if stop is not None:
    os._exit(17)  # killed mid-epoch: no clean stop
