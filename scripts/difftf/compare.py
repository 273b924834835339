"""Compares TF's answers (cases file) with feedstock's (runner output).

Usage: compare.py CASES.jsonl ANSWERS.jsonl [--show N]
Prints counts and the first mismatches, grouped by kind of mismatch.
"""
import collections
import json
import math
import struct
import sys

# feedstock's dtype names -> the harness's canonical ones
CANON = {"u8": "u8", "uint8": "u8"}


def is_nan_bits(dt, b):
    if dt == "f32":
        return math.isnan(struct.unpack("<f", struct.pack("<I", b))[0])
    if dt == "f64":
        return math.isnan(struct.unpack("<d", struct.pack("<Q", b))[0])
    return False


def same_tensor(a, b, tol=None):
    if a.get("sparse") or b.get("sparse"):
        if not (a.get("sparse") and b.get("sparse")):
            return "sparse-vs-dense"
        if a["dense_shape"] != b["dense_shape"]:
            return "dense_shape"
        return (same_tensor(a["indices"], b["indices"])
                or same_tensor(a["values"], b["values"], tol))
    if a["dtype"] != b["dtype"]:
        return f"dtype {a['dtype']} vs {b['dtype']}"
    if a["shape"] != b["shape"]:
        return f"shape {a['shape']} vs {b['shape']}"
    if a["v"] == b["v"]:
        return None
    nan_diff = False
    for x, y in zip(a["v"], b["v"]):
        if x == y:
            continue
        if tol is not None and abs(x - y) <= tol:
            continue
        if is_nan_bits(a["dtype"], x) and is_nan_bits(a["dtype"], y):
            nan_diff = True
            continue
        return "values"
    return "nan-bits" if nan_diff else None


def compare(tf, fs, tol=None):
    if tf["ok"] and fs["ok"]:
        if len(tf["out"]) != len(fs["out"]):
            return "n-outputs"
        for a, b in zip(tf["out"], fs["out"]):
            d = same_tensor(a, b, tol)
            if d:
                return d
        return None
    if tf["ok"] and not fs["ok"]:
        return f"fs-error {fs['kind']}"
    if not tf["ok"] and fs["ok"]:
        return f"tf-error {tf['kind']}"
    want = {"InvalidArgumentError": "InvalidArgument",
            "DataLossError": "DataLoss", "OutOfRangeError": "OutOfRange",
            "UnimplementedError": "Unimplemented",
            "NotFoundError": "NotFound"}.get(tf["kind"], tf["kind"])
    if want != fs["kind"] and not tf["kind"].startswith("Python"):
        return f"error-kind {tf['kind']} vs {fs['kind']}"
    return None


def main():
    cases = [json.loads(l) for l in open(sys.argv[1])]
    answers = {}
    for l in open(sys.argv[2]):
        a = json.loads(l)
        answers[a["id"]] = a
    show = int(sys.argv[sys.argv.index("--show") + 1]) if (
        "--show" in sys.argv) else 3
    groups = collections.defaultdict(list)
    n_ok = n_err = 0
    for c in cases:
        fs = answers[c["id"]]
        if c["tf"]["ok"]:
            n_ok += 1
        else:
            n_err += 1
        d = compare(c["tf"], fs, c.get("tol"))
        if d:
            groups[d].append((c, fs))
    print(f"{len(cases)} cases ({n_ok} TF successes, {n_err} TF errors); "
          f"{sum(len(v) for v in groups.values())} mismatches")
    for d, items in sorted(groups.items(), key=lambda x: -len(x[1])):
        print(f"== {d}: {len(items)}")
        for c, fs in items[:show]:
            print("  input:", json.dumps(c["input"])[:400])
            print("  tf:   ", json.dumps(c["tf"])[:400])
            print("  fs:   ", json.dumps(fs)[:400])


if __name__ == "__main__":
    main()
