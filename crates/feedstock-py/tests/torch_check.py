"""The torch adapter under a real ``torch.utils.data.DataLoader``: every
example exactly ``num_epochs`` times with 1, 2 and 4 worker processes
per rank, for 1 and 2 distributed ranks run as concurrent processes (as
``torchrun`` starts them: each learns its rank from the ``RANK`` and
``WORLD_SIZE`` environment variables; torch.distributed itself is not
needed), from files; from preloaded arrays that do not divide evenly,
padded so that every rank gets the same number of examples, each at
least once. Not a pytest module: CI
does not install torch. Run it with ``scripts/torch-check``."""

import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

FILES = 8
PER_FILE = 25
EXAMPLES = FILES * PER_FILE
EPOCHS = 2
ARRAY_ROWS = 101


def rank_main(source, workers):
    """One rank: iterate its DataLoader to the end and print the ids it
    got as JSON."""
    import torch

    import feedstock as fs
    from feedstock.torch import IterableDataset

    rank = int(os.environ["RANK"])
    if source == "arrays":
        ds = IterableDataset(arrays={"x": np.arange(ARRAY_ROWS)}, batch_size=8, num_epochs=1, remainder="pad")
        key = "x"
    else:
        files = sorted(os.path.join(source, f) for f in os.listdir(source))
        spec = {"id": fs.FixedLenFeature([], fs.int64)}
        # One seed on every rank: the split of the files is a function of it.
        ds = IterableDataset(files, features=spec, batch_size=7, num_epochs=EPOCHS, seed=11)
        key = "id"
    ids = []
    for batch in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers):
        assert isinstance(batch[key], torch.Tensor)
        ids.extend(batch[key].tolist())
    print(json.dumps(ids))


def run_ranks(source, world_size, workers):
    """Starts `world_size` rank processes at once; their ids, merged."""
    procs = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world_size))
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--rank", source, str(workers)],
            env=env, stdout=subprocess.PIPE, text=True,
        ))
    ids, per_rank = [], []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"a rank exited with {p.returncode}")
        got = json.loads(out.strip().splitlines()[-1])
        per_rank.append(len(got))
        ids.extend(got)
    return ids, per_rank


def main():
    from feedstock.example import Example, Feature, Features, Int64List
    from feedstock.tfrecord import TFRecordWriter

    failures = checks = 0
    with tempfile.TemporaryDirectory() as d:
        for f in range(FILES):
            with TFRecordWriter(f"{d}/part-{f}.tfrecord") as w:
                for i in range(f * PER_FILE, (f + 1) * PER_FILE):
                    w.write(Example(features=Features(feature={"id": Feature(int64_list=Int64List(value=[i]))}))
                            .SerializeToString())
        want = collections.Counter(list(range(EXAMPLES)) * EPOCHS)
        for world_size in (1, 2):
            for workers in (1, 2, 4):
                ids, per_rank = run_ranks(d, world_size, workers)
                ok = collections.Counter(ids) == want
                checks += 1
                failures += not ok
                print(f"files, ranks={world_size} (concurrent) workers={workers}: {len(ids)} examples "
                      f"(per rank {per_rank}), {'each exactly twice' if ok else 'WRONG'}", flush=True)
        for workers in (1, 4):
            ids, per_rank = run_ranks("arrays", 2, workers)
            readers = 2 * workers
            ok = (set(ids) == set(range(ARRAY_ROWS)) and len(set(per_rank)) == 1
                  and len(ids) == -(-ARRAY_ROWS // readers) * readers)
            checks += 1
            failures += not ok
            print(f"arrays, ranks=2 (concurrent) workers={workers}: {len(ids)} examples (per rank {per_rank}), "
                  f"{'each at least once, equal ranks' if ok else 'WRONG'}", flush=True)
    print(f"{checks - failures} passed, {failures} failed")
    return failures


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rank":
        rank_main(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(1 if main() else 0)
