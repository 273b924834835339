#!/usr/bin/env python3
"""``feedstock.ray.read_tfrecords`` against ``ray.data.read_tfrecords``,
on the same files, in one run.

TFRecord files of small ``tf.train.Example`` records (a ``[16]`` float
feature, an int64 label and a short string) are read to the end through
``ds.iter_batches(batch_size=1024, batch_format="numpy")`` on a fresh
local Ray (``num_cpus=2``, no dashboard, usage stats off). Each reader
runs in its own process, ``--repeat`` times; reported, per reader, the
median of:

- rows/s over the whole read (``read_*`` call to last batch), of the
  first read in a fresh Ray session ("cold": Ray starts its workers,
  which import their modules: TensorFlow for Ray's reader) and of a
  second read in the same session ("warm");
- first-batch latency (``read_*`` call to first batch, Ray already up),
  cold and warm;
- peak memory: the largest sum of the resident sets of the process and
  every process under it (the Ray workers, raylet, GCS, object store),
  sampled every 50 ms.

Ray's reader needs TensorFlow: ``--ray-python`` names an interpreter that
has it (with the pinned ``ray[data]``); without one, only feedstock's is
measured. feedstock's runs in this interpreter, which must have the
package (``FEEDSTOCK_PY_RELEASE=1 scripts/test-python`` builds it
optimised into ``.venv``)::

    .venv/bin/python benches/python/ray_read.py --ray-python /work/venv-tf/bin/python

This is a measurement, not a test: it checks only that both readers
delivered every row.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BATCH = 1024


def write_files(out_dir, rows, nfiles):
    from feedstock.example import BytesList, Example, Feature, Features, FloatList, Int64List
    from feedstock.tfrecord import TFRecordWriter

    files = []
    per = rows // nfiles
    for f in range(nfiles):
        path = os.path.join(out_dir, f"part-{f:03d}.tfrecord")
        with TFRecordWriter(path) as w:
            for i in range(f * per, (f + 1) * per):
                w.write(Example(features=Features(feature={
                    "x": Feature(float_list=FloatList(value=[(i + j) / 7 for j in range(16)])),
                    "label": Feature(int64_list=Int64List(value=[i % 10])),
                    "name": Feature(bytes_list=BytesList(value=[b"row-%d" % i])),
                })).SerializeToString())
        files.append(path)
    return files, per * nfiles


def child(reader, files):
    """Two measured reads in one Ray session, in a process of its own:
    the first on a fresh Ray (its workers start and import their
    modules), the second warm. Prints a JSON line."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray

    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             configure_logging=False)
    reads = []
    for _ in range(2):
        t0 = time.perf_counter()
        if reader == "feedstock":
            import feedstock as fs
            import feedstock.ray as fray

            spec = {"x": fs.FixedLenFeature([16], fs.float32), "label": fs.FixedLenFeature([], fs.int64),
                    "name": fs.FixedLenFeature([], fs.string)}
            ds = fray.read_tfrecords(files, features=spec)
        else:
            ds = ray.data.read_tfrecords(files)
        rows, first, shape = 0, None, None
        for batch in ds.iter_batches(batch_size=BATCH, batch_format="numpy"):
            if first is None:
                first = time.perf_counter() - t0
                x = batch["x"]
                shape = f"{x.dtype}{list(x.shape)}"
            rows += len(batch["label"])
        reads.append({"rows": rows, "seconds": time.perf_counter() - t0, "first": first, "x": shape})
    ray.shutdown()
    print(json.dumps(reads))


def tree_rss(pid):
    """The resident set of ``pid`` and every process under it, in bytes."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    total, todo = 0, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except OSError:
            pass
    return total


def measure(python, reader, files):
    proc = subprocess.Popen([python, os.path.abspath(__file__), "--child", reader, *files],
                            stdout=subprocess.PIPE, text=True)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.05)

    t = threading.Thread(target=sample)
    t.start()
    out, _ = proc.communicate()
    done.set()
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"{reader} failed ({proc.returncode})")
    return {"reads": json.loads(out.strip().splitlines()[-1]), "peak": peak[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--files-count", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ray-python", help="an interpreter with TensorFlow and ray[data], for ray.data.read_tfrecords")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.files)
        return
    with tempfile.TemporaryDirectory() as d:
        files, rows = write_files(d, args.rows, args.files_count)
        ways = [("feedstock.ray.read_tfrecords", sys.executable, "feedstock")]
        if args.ray_python:
            ways.append(("ray.data.read_tfrecords", args.ray_python, "ray"))
        results = {}
        for _ in range(args.repeat):  # alternated, so drift hits both alike
            for name, python, reader in ways:
                r = measure(python, reader, files)
                for read in r["reads"]:
                    if read["rows"] != rows:
                        raise SystemExit(f"{name} delivered {read['rows']} rows of {rows}")
                results.setdefault(name, []).append(r)
    print(f"{rows} rows in {len(files)} files, batches of {BATCH}, median of {args.repeat}; "
          "cold: the first read on a fresh Ray, warm: a second read in the same session")
    print(f"{'reader':30} {'rows/s cold':>12} {'rows/s warm':>12} {'1st batch cold':>15} "
          f"{'1st batch warm':>15} {'peak memory':>12}  x")
    rates = {}
    for name, rs in results.items():
        cold = statistics.median(r["reads"][0]["rows"] / r["reads"][0]["seconds"] for r in rs)
        warm = statistics.median(r["reads"][1]["rows"] / r["reads"][1]["seconds"] for r in rs)
        first_cold = statistics.median(r["reads"][0]["first"] for r in rs)
        first_warm = statistics.median(r["reads"][1]["first"] for r in rs)
        peak = statistics.median(r["peak"] for r in rs)
        rates[name] = (cold, warm)
        print(f"{name:30} {cold:12.0f} {warm:12.0f} {first_cold:14.2f}s {first_warm:14.2f}s "
              f"{peak / 2**20:8.0f} MiB  {rs[0]['reads'][0]['x']}")
    if len(rates) == 2:
        (a, (ac, aw)), (b, (bc, bw)) = rates.items()
        print(f"{a} / {b}: {ac / bc:.1f}x rows/s cold, {aw / bw:.1f}x warm")


if __name__ == "__main__":
    main()
