"""decode_csv cases: random and adversarial records, TF's answers.

Usage: gen_csv.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import tensorflow as tf

from tfcommon import enc_array, run_tf, write_cases

INTS = ["0", "-1", "+5", " 12 ", "\t7", "2147483647", "2147483648",
        "-2147483648", "-2147483649", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "0x10", "1e3", "1.0", "007", "- 1", "1_0",
        "--1", "+-1", "+", "-", "12a", " ", "99999999999999999999", "1 2",
        "\x0b3\x0c", "00000000000000000000000000042", "+0", "-0"]
FLOATS = ["1.5", "-0", "-0.0", "1e38", "3.4028235e38", "3.4028236e38",
          "3.5e38", "1e-46", "1e-45", "7e-46", "inf", "-Infinity", "nan",
          "NaN", "-nan", "+nan", "nan(123)", "0x1p3", "0X1.8P1", "1.", " .5 ",
          ".", ".e1", "1e", "1e+", "infinity", "INF", "+inf", "infinit",
          "1.5f", "1d", "0.1000000000000000055511151231257827", "4.9e-324",
          "2.4703282292062328e-324", "1e309", "-1e309", "1e-400",
          "1.7976931348623157e308", "1.7976931348623159e308", "  -2.5e-3\t",
          "1e+05", "1E5", "+.5", "-.5e-1", "5.e2", "0x", "0x1", "0xg",
          "1,5", "1..2", "e5", "123456789012345678901234567890",
          "1" + "0" * 40, "0." + "0" * 50 + "1", "nan()", "nan(abc_1)",
          "infx", "-", "+", "1e99999", "1e-99999", "0e0", "00.5"]
STRS = ["abc", "", " a ", "\"q\"", "\"a,b\"", "\"a\"\"b\"", "a\"b",
        "\"abc\"x", "\"unterminated", "\r", "\n", "\"\"", "\"\"\"\"",
        "NA", "\"NA\"", " NA", "na", "\"a\nb\"", "\"a\rb\"", "x\ry",
        "\"\"x", "é", "\t", "\"", "a b"]
ALPHA = [",", "\"", "1", "a", " ", "\n", "\r", "-", "e", ".", ";", "\t",
         "N", "A", "i", "n", "f", "0", "9"]
DTYPES = [("int32", tf.int32, INTS), ("int64", tf.int64, INTS),
          ("float32", tf.float32, FLOATS), ("float64", tf.float64, FLOATS),
          ("string", tf.string, STRS)]
DEFAULTS = {"int32": [0, -7, 42], "int64": [0, -7, 1 << 40],
            "float32": [0.0, -1.5, 0.25], "float64": [0.0, -1.5, 1e300],
            "string": ["", "dflt", "NA"]}
NP = {"int32": "int32", "int64": "int64", "float32": "float32",
      "float64": "float64", "string": object}


def quote(s):
    return "\"" + s.replace("\"", "\"\"") + "\""


def field(rng, toks):
    r = rng.random()
    if r < 0.7:
        f = rng.choice(toks)
    elif r < 0.85:
        f = rng.choice(INTS + FLOATS + STRS)
    else:
        f = "".join(rng.choice(ALPHA) for _ in range(rng.randint(0, 6)))
    if rng.random() < 0.1:
        f = quote(f)
    return f


def make_case(rng, i):
    ncols = rng.randint(1, 5)
    cols = []
    for _ in range(ncols):
        name, _, toks = rng.choice(DTYPES)
        default = None if rng.random() < 0.4 else rng.choice(DEFAULTS[name])
        cols.append((name, toks, default))
    delim = rng.choice([",", ",", ",", ";", "\t", " ", "|"])
    quoting = rng.random() < 0.8
    na = rng.choice([None, None, "NA", "nan", "-1", ""])
    select = None
    nrec = ncols
    if rng.random() < 0.2:
        nrec = ncols + rng.randint(0, 3)
        select = sorted(rng.sample(range(nrec), ncols))
    toks_by_rec = {}
    for j in range(nrec):
        toks_by_rec[j] = cols[select.index(j)][1] if (
            select and j in select) else (cols[j][1] if not select else STRS)
    fields = [field(rng, toks_by_rec[j]) for j in range(nrec)]
    r = rng.random()
    if r < 0.08:
        fields = fields[:-1]
    elif r < 0.16:
        fields.append(field(rng, STRS))
    rec = delim.join(fields)
    if rng.random() < 0.05:
        rec = "".join(rng.choice(ALPHA) for _ in range(rng.randint(0, 12)))
    if rng.random() < 0.03:
        rec += rng.choice(["\n", "\r\n", "\r"])
    rec_b = rec.encode("utf-8")
    inp = {"record": rec_b.hex(), "defaults": [
        {"dtype": n, "value": d} for n, _, d in cols],
        "field_delim": delim, "use_quote_delim": quoting, "na_value": na,
        "select_cols": select}

    def tf_call():
        import numpy as np
        rd = []
        for n, _, d in cols:
            dt = dict((a, b) for a, b, _ in DTYPES)[n]
            rd.append(tf.constant([] if d is None else [d], dtype=dt))
        kw = {}
        if na is not None:
            kw["na_value"] = na
        if select is not None:
            kw["select_cols"] = select
        out = tf.io.decode_csv(tf.constant([rec_b]), rd, field_delim=delim,
                               use_quote_delim=quoting, **kw)
        return [enc_array(o.numpy()) for o in out]

    return {"id": f"csv{i}", "area": "csv", "input": inp,
            "tf": run_tf(tf_call)}


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    write_cases(out, [make_case(rng, i) for i in range(n)])


if __name__ == "__main__":
    main()
