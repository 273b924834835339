#!/usr/bin/env bash
# Differential run against TensorFlow: generate cases with TF, answer them
# with feedstock, compare. Needs a Python with TensorFlow (TF_PY, default
# /work/tfvenv/bin/python); never run by CI.
#   scripts/difftf/run.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/tmp/difftf}"
py="${TF_PY:-/work/tfvenv/bin/python}"
export TF_CPP_MIN_LOG_LEVEL=3
mkdir -p "$out"
# The runner is its own Cargo project; sharing the workspace's target dir
# reuses the dependencies already built there.
(cd "$here/runner" && CARGO_TARGET_DIR="$here/../../target" cargo build -q)
runner="$here/../../target/debug/difftf-runner"
cd "$here"
"$py" gen_csv.py "$out/csv.jsonl" 12000 7 2>/dev/null
"$py" gen_numbers.py "$out/num.jsonl" 3000 3 2>/dev/null
"$py" gen_example.py "$out/ex.jsonl" 2500 11 2>/dev/null
"$py" gen_misc.py "$out/misc.jsonl" "$out/files" 200 2>/dev/null
"$py" gen_seq.py "$out/seq.jsonl" 800 2>/dev/null
"$py" gen_image.py "$out/img.jsonl" 150 2>/dev/null
"$py" gen_batch.py "$out/batch.jsonl" 60 2>/dev/null
for area in csv num ex seq misc img batch; do
    "$runner" < "$out/$area.jsonl" > "$out/$area.out"
    echo "### $area"
    python3 compare.py "$out/$area.jsonl" "$out/$area.out" --show 1 \
        | cut -c1-300
done
