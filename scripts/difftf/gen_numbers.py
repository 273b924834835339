"""Number parsing cases: string_to_number and a one-column decode_csv on
the same odd strings, for int32, int64, float32 and float64.

Usage: gen_numbers.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import tensorflow as tf

from gen_csv import FLOATS, INTS
from tfcommon import enc_array, run_tf, write_cases

EXTRA = ["0x10", "0X1.8P1", "0x1", "0x", "0xg", "0x.8", "0x.", "0x1p",
         "0x1p-2", "-0x1p-2", " 0x1 ", "0x1P-149", "0x1p-150",
         "0x1.000001p-149", "0x1.8p-150", "0x1p128", "0x1.ffffffp127",
         "0x1.0000008p0", "0x1.00000080000001p0", "0x1e2", "0x1.p1",
         "+0x1", "0x1p1f", "0x1p99999", "0x1p-1074", "0x1.8p-1075",
         "0xffffffffffffffffffffp0", "00x1", "0x-1", "1p3", "0x1 p1",
         "-0x", "0x1P+3", "0Xa.Bp-2", "0x1.fffffffffffff8p1023",
         "1" * 31, "1" * 32, "1" * 33, " " * 30 + "1", "1" + " " * 31,
         "0." + "0" * 29 + "1", "0." + "0" * 30 + "1", "1e-" + "0" * 28 + "1",
         "\t1\n", "\x0b1", "\x0c1", "1\x0b", "\r1\r", "nan(1)", "-nan(x)",
         "INFINITY", "-iNf", "+Infinity", "infinityy", "NAN", "nAn",
         "1e0000000000000000000000000005", "00000000000000000000000000001",
         "-00000000000000000000000000000001", "0", "-0", "1.0e-7",
         "3.4028235677973366e38", "3.4028235677973362e38", "1e-45",
         "1.401298464324817e-45", "7.006492321624085e-46",
         "7.006492321624086e-46", "2.2250738585072011e-308",
         "2.4703282292062327e-324", "2.4703282292062328e-324"]
ALPHA = "0123456789+-.eExXpPabcdfinINFaAtyY \t"
DT = {"int32": tf.int32, "int64": tf.int64, "float32": tf.float32,
      "float64": tf.float64}


def rand_str(rng):
    r = rng.random()
    if r < 0.6:
        return rng.choice(INTS + FLOATS + EXTRA)
    if r < 0.8:
        # mutate a token
        s = list(rng.choice(INTS + FLOATS + EXTRA))
        for _ in range(rng.randint(1, 2)):
            op = rng.randint(0, 2)
            pos = rng.randint(0, len(s))
            if op == 0:
                s.insert(pos, rng.choice(ALPHA))
            elif s:
                del s[min(pos, len(s) - 1)]
        return "".join(s)
    if r < 0.85:
        # random hexadecimal float
        h = "".join(rng.choice("0123456789abcdefABCDEF")
                    for _ in range(rng.randint(0, 20)))
        if rng.random() < 0.6:
            k = rng.randint(0, len(h))
            h = h[:k] + "." + h[k:]
        if rng.random() < 0.7:
            h += rng.choice("pP") + rng.choice(["", "+", "-"]) + str(
                rng.choice([rng.randint(0, 20), rng.randint(0, 1200)]))
        return rng.choice(["", "-", "+"]) + rng.choice(["0x", "0X"]) + h
    if r < 0.9:
        # random number-ish
        digits = "".join(rng.choice("0123456789")
                         for _ in range(rng.randint(1, 25)))
        if rng.random() < 0.5:
            k = rng.randint(0, len(digits))
            digits = digits[:k] + "." + digits[k:]
        if rng.random() < 0.5:
            digits += "e" + str(rng.randint(-400, 400))
        return rng.choice(["", "-", "+"]) + digits
    return "".join(rng.choice(ALPHA) for _ in range(rng.randint(0, 8)))


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    strs = sorted(set(EXTRA + INTS + FLOATS)) + [
        rand_str(rng) for _ in range(n)]
    cases = []
    for i, s in enumerate(strs):
        b = s.encode()
        for name, dt in DT.items():
            cases.append({"id": f"s2n{i}-{name}", "area": "to_number",
                          "input": {"s": b.hex(), "dtype": name},
                          "tf": run_tf(lambda: [enc_array(
                              tf.strings.to_number([b], dt).numpy())])})
            if "," in s or "\"" in s or "\n" in s or "\r" in s:
                continue
            cases.append({"id": f"csvnum{i}-{name}", "area": "csv",
                          "input": {"record": b.hex(), "defaults": [
                              {"dtype": name, "value": None}],
                              "field_delim": ",", "use_quote_delim": True,
                              "na_value": None, "select_cols": None},
                          "tf": run_tf(lambda: [enc_array(tf.io.decode_csv(
                              [b], [tf.constant([], dt)])[0].numpy())])})
    write_cases(out, cases)


if __name__ == "__main__":
    main()
