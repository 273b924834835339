"""Writes the JPEG golden corpus: JPEGs made by TensorFlow's encode_jpeg
(qualities 50-100, 4:2:0 and 4:4:4, baseline and progressive, gray and
colour, odd sizes) and, for each, the CRC-32C and shape of what
TensorFlow's decode_jpeg gives with channels 0, 1 and 3.

Usage: gen_jpeg_golden.py OUT_DIR   (run with a TensorFlow Python)
"""
import json
import os
import random
import sys

import numpy as np
import tensorflow as tf


def crc32c(data):
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def main():
    out = sys.argv[1]
    rng = random.Random(2021)
    cases = []
    for i in range(24):
        h, w = rng.randint(1, 48), rng.randint(1, 48)
        c = rng.choice([1, 3, 3])
        x = np.linspace(0, 1, w)[None, :, None]
        y = np.linspace(0, 1, h)[:, None, None]
        base = (x * rng.random() + y * rng.random()) * 200
        noise = np.array([rng.random() * 60 for _ in range(h * w * c)]
                         ).reshape(h, w, c)
        img = ((base + noise) % 256).astype(np.uint8)
        kw = {"quality": rng.choice([50, 75, 90, 100]),
              "progressive": rng.random() < 0.3}
        if c == 3:
            kw["chroma_downsampling"] = rng.random() < 0.6
        jpg = tf.io.encode_jpeg(img, **kw).numpy()
        name = f"{i:02}.jpg"
        with open(os.path.join(out, name), "wb") as f:
            f.write(jpg)
        for ch in [0, 1, 3]:
            d = tf.io.decode_jpeg(jpg, channels=ch).numpy()
            cases.append({"file": name, "channels": ch,
                          "shape": list(d.shape),
                          "crc32c": crc32c(d.tobytes())})
    meta = {"tensorflow": tf.__version__,
            "op": "tf.io.decode_jpeg(contents, channels) with its defaults",
            "cases": cases}
    with open(os.path.join(out, "decoded.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
