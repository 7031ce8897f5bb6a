#!/bin/bash
# On the GPU host (PyTorch, torchvision and transformers installed; no
# network): (a) dlcomm's DDP buckets against PyTorch's own assignment for
# every built-in model at several caps, (b) tune of ResNet-50 (DDP) and
# GPT-2 (Horovod) on the nccl backend. Everything goes to $OUT (6 files).
# Needs build-gpu/dlcomm (scripts/gpu-host-build.sh). About 2 minutes.
set -u
export NCCL_NVLS_ENABLE=0
OUT=${OUT:?set OUT to the output folder}
BIN=${BIN:-build-gpu/dlcomm}
here=$(cd "$(dirname "$0")" && pwd)
rc=0
: > "$OUT/ddp-buckets.txt"
for m in resnet50 bert-large gpt2 llama2-7b; do
  "$BIN" tune --model "$m" --bucket-caps 1,5,25,100 --plan-only --json "$OUT/plan-$m.json.tmp" || rc=1
  python3 "$here/model-gradients.py" check "$m" "$OUT/plan-$m.json.tmp" >> "$OUT/ddp-buckets.txt" 2>&1 || rc=1
  rm -f "$OUT/plan-$m.json.tmp"
done
grep -c '"identical": true' "$OUT/ddp-buckets.txt" > "$OUT/ddp-identical-count.txt"
mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE "$BIN" tune --model resnet50 --framework ddp \
  --backend nccl --out "$OUT/run-resnet50" --json "$OUT/tune-resnet50-ddp.json" \
  > "$OUT/tune-resnet50-ddp.txt" 2>&1 || rc=1
mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE "$BIN" tune --model gpt2 --framework horovod \
  --backend nccl --out "$OUT/run-gpt2" --json "$OUT/tune-gpt2-horovod.json" \
  > "$OUT/tune-gpt2-horovod.txt" 2>&1 || rc=1
rm -rf "$OUT/run-resnet50/workers" "$OUT/run-gpt2/workers"
tar -C "$OUT" -czf "$OUT/runs.tar.gz" run-resnet50 run-gpt2 && rm -rf "$OUT/run-resnet50" "$OUT/run-gpt2"
exit $rc
