"""Image cases: PNG decode (exact), JPEG decode (within a tolerance),
per_image_standardization (within a few ULPs).

Usage: gen_image.py OUT.jsonl [N] [SEED]
"""
import random
import sys

import numpy as np
import tensorflow as tf

from tfcommon import enc_array, run_tf, write_cases


def rand_image(rng, h, w, c, dtype=np.uint8):
    x = np.linspace(0, 1, w)[None, :, None]
    y = np.linspace(0, 1, h)[:, None, None]
    base = (x * rng.random() + y * rng.random()) * 200
    noise = np.array([rng.random() * 40 for _ in range(h * w * c)]
                     ).reshape(h, w, c)
    img = (base + noise) % 256
    if dtype == np.uint16:
        return (img * 257).astype(np.uint16)
    return img.astype(np.uint8)


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 6)
    cases = []
    for i in range(n):
        h, w = rng.randint(1, 17), rng.randint(1, 17)
        c = rng.choice([1, 2, 3, 4])
        img = rand_image(rng, h, w, c)
        png = tf.io.encode_png(img).numpy()
        if rng.random() < 0.1:
            png = png[:rng.randint(0, len(png) - 1)]
        for ch in [0, 1, 2, 3, 4]:
            cases.append({"id": f"png{i}-{ch}", "area": "png",
                          "input": {"bytes": png.hex(), "channels": ch},
                          "tf": run_tf(lambda: [enc_array(tf.io.decode_png(
                              png, channels=ch).numpy())])})
        c = rng.choice([1, 3])
        img = rand_image(rng, h, w, c)
        jpg = tf.io.encode_jpeg(img, quality=rng.choice([50, 90, 100])
                                ).numpy()
        for ch in [0, 1, 3]:
            cases.append({"id": f"jpg{i}-{ch}", "area": "jpeg", "tol": 0,
                          "input": {"bytes": jpg.hex(), "channels": ch},
                          "tf": run_tf(lambda: [enc_array(tf.io.decode_jpeg(
                              jpg, channels=ch).numpy())])})
        c = rng.choice([1, 3])
        if rng.random() < 0.5:
            img = rand_image(rng, h, w, c)
        else:
            img = np.array([rng.choice([0.0, 1.0, -3.5, 1e3,
                                        rng.random()])
                            for _ in range(h * w * c)],
                           dtype=np.float32).reshape(h, w, c)
        cases.append({"id": f"std{i}", "area": "standardize", "tol": 64,
                      "input": {"image": enc_array(img)},
                      "tf": run_tf(lambda: [enc_array(
                          tf.image.per_image_standardization(img).numpy())])})
    write_cases(out, cases)


if __name__ == "__main__":
    main()
