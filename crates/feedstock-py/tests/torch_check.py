"""The torch adapter under a real ``torch.utils.data.DataLoader``: every
example exactly ``num_epochs`` times with 1, 2 and 4 worker processes and
2 ranks (each rank's DataLoader run in turn, as two distributed processes
would run them). Not a pytest module: CI does not install torch. Run it
with ``scripts/torch-check``."""

import collections
import sys
import tempfile

import numpy as np
import torch

import feedstock as fs
from feedstock.example import Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter
from feedstock.torch import IterableDataset


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        files = []
        for f in range(8):
            path = f"{d}/part-{f}.tfrecord"
            with TFRecordWriter(path) as w:
                for i in range(f * 25, (f + 1) * 25):
                    w.write(Example(features=Features(feature={"id": Feature(int64_list=Int64List(value=[i]))}))
                            .SerializeToString())
            files.append(path)
        spec = {"id": fs.FixedLenFeature([], fs.int64)}
        for world_size in (1, 2):
            for workers in (1, 2, 4):
                ids = []
                for rank in range(world_size):
                    ds = IterableDataset(files, rank=rank, world_size=world_size, features=spec, batch_size=7,
                                         num_epochs=2, seed=rank)
                    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
                    for batch in loader:
                        assert isinstance(batch["id"], torch.Tensor)
                        ids.extend(batch["id"].tolist())
                ok = collections.Counter(ids) == collections.Counter(list(range(200)) * 2)
                failures += not ok
                print(f"ranks={world_size} workers={workers}: {len(ids)} examples, "
                      f"{'each exactly twice' if ok else 'WRONG'}")
        x = np.arange(101)
        ids = []
        for rank in range(2):
            ds = IterableDataset(arrays={"x": x}, rank=rank, world_size=2, batch_size=8, num_epochs=1)
            for batch in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4):
                ids.extend(batch["x"].tolist())
        ok = sorted(ids) == list(range(101))
        failures += not ok
        print(f"arrays, ranks=2 workers=4: {'each exactly once' if ok else 'WRONG'}")
    print(f"{9 - failures} passed, {failures} failed")
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
