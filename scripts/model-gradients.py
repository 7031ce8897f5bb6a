#!/usr/bin/env python3
"""A PyTorch model's gradients as a dlcomm tune model file, and the check of
dlcomm's DDP buckets against PyTorch's own assignment.

  model-gradients.py write MODULE:NAME OUT.json    e.g. torchvision:resnet50
  model-gradients.py check NAME PLAN.json [OUT.json]  (PLAN: dlcomm tune --plan-only)

From Python: write_model_file(model, path, name). Only trainable parameters
go in (requires_grad), each shared parameter once (named_parameters()
yields a shared one once), in named_parameters() order. The built-in
names (resnet50, bert-large, gpt2, llama2-7b) are built from their configs,
never downloaded; llama2-7b on the meta device."""
import json
import sys

DTYPES = {"torch.float32": "float32", "torch.float16": "float16", "torch.bfloat16": "bfloat16"}


def gradients(model):
    """[(name, shape, dtype)] of the trainable parameters, shared ones once."""
    out = []
    for name, p in model.named_parameters():  # remove_duplicate: shared once
        if not p.requires_grad:
            continue
        dt = DTYPES.get(str(p.dtype))
        if dt is None:
            raise SystemExit("model-gradients: %s has dtype %s; dlcomm tune takes float32, "
                             "float16 or bfloat16" % (name, p.dtype))
        out.append((name, [int(d) for d in p.shape] or [1], dt))
    return out


def model_file(grads, name):
    return {"model": name,
            "tensors": [{"name": n, "shape": s, "dtype": d} for n, s, d in grads]}


def write_model_file(model, path, name="model"):
    with open(path, "w") as f:
        json.dump(model_file(gradients(model), name), f, indent=1)


def builtin(name):
    """dlcomm's built-in models, from their architectures' configs."""
    import torch
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None)
    import transformers as tf
    if name == "bert-large":
        return tf.BertModel(tf.BertConfig(hidden_size=1024, num_hidden_layers=24,
                                          num_attention_heads=16, intermediate_size=4096))
    if name == "gpt2":
        return tf.GPT2Model(tf.GPT2Config())
    if name == "llama2-7b":
        cfg = tf.LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                             num_attention_heads=32, num_key_value_heads=32, vocab_size=32000)
        with torch.device("meta"):
            return tf.LlamaForCausalLM(cfg)
    raise SystemExit("model-gradients: unknown built-in %r" % name)


def load(spec):
    if ":" not in spec:
        return builtin(spec)
    mod, attr = spec.split(":", 1)
    import importlib
    m = importlib.import_module(mod)
    for part in attr.split("."):
        m = getattr(m, part)
    return m() if callable(m) else m


def torch_ddp_buckets(model, first_bytes, cap_bytes):
    """PyTorch's own assignment, as DDP rebuilds its buckets after the first
    step: the gradients in ready order (reverse parameter order here), the
    limits [first bucket, cap]."""
    import torch
    import torch.distributed as dist
    fn = getattr(dist, "_compute_bucket_assignment_by_size", None)
    if fn is None:
        fn = torch._C._distributed_c10d._compute_bucket_assignment_by_size
    params = [p for p in model.parameters() if p.requires_grad]
    order = list(range(len(params)))[::-1]
    tensors = [params[i] for i in order]
    try:
        r = fn(tensors, [first_bytes, cap_bytes], [False] * len(params), order)
    except TypeError:  # bindings that take these by keyword only
        r = fn(tensors, [first_bytes, cap_bytes], expect_sparse_gradient=[False] * len(params),
               tensor_indices=order)
    buckets = r[0] if isinstance(r, tuple) else r
    return [list(map(int, b)) for b in buckets]


def check(name, plan_path, out_path=None):
    """dlcomm's model and buckets (tune --plan-only) against PyTorch's."""
    plan = json.load(open(plan_path))
    model = builtin(name)
    mine = model_file(gradients(model), name)["tensors"]
    theirs = plan["model"]["tensors"]
    report = {"model": name, "tensors_torch": len(mine), "tensors_dlcomm": len(theirs),
              "params_torch": sum(int(__import__("math").prod(t["shape"])) for t in mine),
              "names_shapes_equal": [(t["name"], t["shape"]) for t in mine] ==
                                    [(t["name"], t.get("shape")) for t in theirs],
              "caps": []}
    ok = report["names_shapes_equal"]
    for c in plan["candidates"]:
        cap = int(c["bucket_cap_mb"] * 1024 * 1024)
        tb = torch_ddp_buckets(model, int(plan.get("first_bucket_bytes", 1 << 20)), cap)
        same = tb == c["buckets"]
        ok = ok and same
        report["caps"].append({"bucket_cap_mb": c["bucket_cap_mb"], "buckets_torch": len(tb),
                               "buckets_dlcomm": len(c["buckets"]), "identical": same})
    report["identical"] = ok
    text = json.dumps(report, indent=1)
    if out_path:
        open(out_path, "w").write(text)
    print(text)
    return 0 if ok else 1


def main(argv):
    if len(argv) >= 3 and argv[0] == "write":
        write_model_file(load(argv[1]), argv[2], argv[1].split(":")[-1])
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1], argv[2], argv[3] if len(argv) > 3 else None)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
