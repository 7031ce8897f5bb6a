#!/usr/bin/env python3
"""dlcomm tune end to end: real mpirun, real ranks, the --json record and
run.json checked. One case per invocation: tune_test.py CASE --mpirun ... --bin ..."""
import argparse, json, os, re, shlex, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_schema  # noqa: E402  (tests/record_schema.py: docs/schema/run.schema.json)

# A small model written out: 4 tensors, 581,200 bytes in float32.
SMALL = {"model": "small", "tensors": [
    {"name": "a", "shape": [1000, 100]}, {"name": "b", "numel": 5000},
    {"name": "c", "shape": [200, 200]}, {"name": "d", "numel": 300}]}
# Eight tensors of 160,000 bytes: with a 0.05 MiB first bucket, caps of
# 0.05, 0.4 and 1 MiB give 8 (each alone), 1+3+3+1 = 4 and 1+7 = 2 buckets.
EIGHT = {"model": "eight", "tensors": [{"name": "w%d" % i, "shape": [200, 200]}
                                       for i in range(8)]}


def run(args, np, extra, env=None, timeout=120):
    cmd = shlex.split(args.mpirun) + ["-np", str(np), args.bin, "tune"] + extra
    e = dict(os.environ, **(env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def fail(msg, out="", err=""):
    print("FAIL:", msg, "\n--- stdout\n", out, "\n--- stderr\n", err)
    sys.exit(1)


def load_run(out_dir):
    """A tune's run.json, checked against the record's schema first."""
    path = os.path.join(out_dir, "run.json")
    doc = json.load(open(path))
    errors = record_schema.validate(doc, path)
    if errors:
        fail("run.json does not match docs/schema/run.schema.json:\n" + "\n".join(errors[:20]))
    return doc


def check_record(path, ncand, framework, out, err):
    d = json.load(open(path))
    if d["framework"] != framework:
        fail("framework %s" % d["framework"], out, err)
    c = d["candidates"]
    if len(c) != ncand:
        fail("%d candidates, want %d" % (len(c), ncand), out, err)
    for x in c:
        if not x["measured"] or not x["step_us"] > 0 or x["exposed_us"] < 0:
            fail("candidate not measured: %s" % x, out, err)
        # Exposed: what runs past the backward pass (a Horovod cycle's wait included).
        if abs(x["exposed_us"] - max(0, x["end_us"] - d["backward_ms"] * 1e3)) > 1e-6:
            fail("exposed is not the part past the backward pass: %s" % x, out, err)
        if x["end_us"] + 1e-6 < x["comm_us"]:
            fail("the calls end before they could: %s" % x, out, err)
        if sum(b["bytes"] for b in x["buckets"]) != d["model"]["bytes"]:
            fail("buckets do not hold the model's gradients: %s" % x, out, err)
        for b in x["buckets"]:
            if not b["call_us"] > 0:
                fail("a call without its time: %s" % b, out, err)
    r = d["recommendation"]
    if r["verdict"] not in ("winner", "any of these") or not r["settings"]:
        fail("no recommendation: %s" % r, out, err)
    if r["verdict"] == "winner" and len(r["settings"]) != 1:
        fail("a winner with company", out, err)
    # The least exposed candidate leads; every setting named is within the
    # two CIs of it, and ties are listed least communication first.
    lead = min(c, key=lambda x: x["exposed_us"])
    named = [(s["profile"], s["exposed_us"], s["comm_us"]) for s in r["settings"]]
    if (lead["profile"], lead["exposed_us"], lead["comm_us"]) not in named:
        fail("the least exposed candidate is not recommended", out, err)
    for s in r["settings"]:
        ci = next(x["step_ci95_us"] for x in c if x["profile"] == s["profile"]
                  and x["exposed_us"] == s["exposed_us"] and x["comm_us"] == s["comm_us"])
        if s["exposed_us"] - lead["exposed_us"] > lead["step_ci95_us"] + ci + 1e-6:
            fail("a setting named beyond the CIs of the least exposed: %s" % s, out, err)
    comms = [s["comm_us"] for s in r["settings"]]
    if comms != sorted(comms):
        fail("tied settings not in order of communication: %s" % comms, out, err)
    for line in r["settings"][0]["paste"]:
        if line not in out:
            fail("paste line %r not printed" % line, out, err)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dltune.")
    model = os.path.join(tmp, "small.json")
    json.dump(SMALL, open(model, "w"))
    rec, out_dir = os.path.join(tmp, "t.json"), os.path.join(tmp, "run")
    common = ["--model", model, "--json", rec, "--out", out_dir, "--backward-ms", "0.2",
              "--budget", "0.2", "--timeout", "30"]
    if args.case == "ddp_np4":
        json.dump(EIGHT, open(model, "w"))
        rc, out, err = run(args, 4, common + ["--backend", "mpi", "--bucket-caps", "0.05,0.4,1",
                                              "--first-bucket-mb", "0.05"])
        if rc != 0:
            fail("exit %d" % rc, out, err)
        d = check_record(rec, 3, "ddp", out, err)
        calls = [len(x["buckets"]) for x in d["candidates"]]
        if calls != [8, 4, 2]:
            fail("buckets per cap %s, want [8, 4, 2]" % calls, out, err)
        if "DistributedDataParallel(..., bucket_cap_mb=" not in out:
            fail("no DDP line", out, err)
        run_json = load_run(out_dir)
        if run_json["tune"]["candidates"] != d["candidates"]:
            fail("run.json's tune section differs from --json", out, err)
        # One command line, one table: the record names the line as given and
        # echoes tune's options beside the measurement's (a step's -w 2).
        opts = run_json["options"]
        if not run_json["command"].startswith("dlcomm tune --model ") or opts.get("model") != model \
                or opts.get("bucket-caps") != "0.05,0.4,1" or opts.get("warmup_iters") != 2 \
                or opts.get("budget") != 0.2 or "collectives" in opts:
            fail("run.json's command %r / options %r" % (run_json["command"], opts), out, err)
        # The chart, through dlcomm plot and real gnuplot.
        plt = os.path.join(tmp, "plot")
        p = subprocess.run([args.bin, "plot", rec, "--out", plt], capture_output=True, text=True)
        png = os.path.join(plt, "tune-exposed.png")
        if p.returncode != 0 or not os.path.getsize(png) > 1000:
            fail("plot of the tune record: exit %d" % p.returncode, p.stdout, p.stderr)
        dat = open(os.path.join(plt, "tune.dat")).read().split("\n")
        pts = [l.split()[:2] for l in dat if l and not l.startswith("#")]
        if [float(e) for _, e in pts] != [round(x["exposed_us"] / 1e3, 6) for x in d["candidates"]]:
            fail("the chart's points are not the record's exposed times: %s" % pts, out, err)
    elif args.case == "horovod_np4_curve":
        # A sweep's curve first, then tune with --curve beside the measurement.
        sweep = shlex.split(args.mpirun) + ["-np", "4", args.bin, "sweep", "-c", "allreduce",
                                            "-b", "1K", "-e", "1M", "--placement", "in",
                                            "--budget", "0.02", "-q", "--out",
                                            os.path.join(tmp, "sweep")]
        subprocess.run(sweep, check=True, capture_output=True, timeout=120)
        rc, out, err = run(args, 4, common + ["--backend", "mpi", "--framework", "horovod",
                                              "--fusion-thresholds", "0,0.1,1",
                                              "--cycle-times", "0.05,1", "--curve",
                                              os.path.join(tmp, "sweep", "run.json")])
        if rc != 0:
            fail("exit %d" % rc, out, err)
        d = check_record(rec, 6, "horovod", out, err)
        for x in d["candidates"]:
            if not x["curve_step_us"] > 0 or "curve_error" not in x:
                fail("no curve prediction: %s" % x, out, err)
            if x["fusion_threshold_bytes"] == 0 and len(x["buckets"]) != 4:
                fail("no fusion should leave one call per tensor", out, err)
        if "HOROVOD_FUSION_THRESHOLD=" not in out or "HOROVOD_CYCLE_TIME=" not in out:
            fail("no Horovod lines", out, err)
        # report's curve advice beside tune's measured answer.
        p = subprocess.run([args.bin, "report", os.path.join(tmp, "sweep", "run.json"), "--tune",
                            rec], capture_output=True, text=True)
        if p.returncode != 0 or "tune's measured answer beside the curve" not in p.stdout or \
                "the curve says" not in p.stdout:
            fail("report --tune: exit %d" % p.returncode, p.stdout, p.stderr)
        p = subprocess.run([args.bin, "report", os.path.join(tmp, "sweep", "run.json"), "--tune",
                            model], capture_output=True, text=True)
        if p.returncode != 2 or "not a dlcomm tune record" not in p.stderr:
            fail("report --tune with a model file: exit %d" % p.returncode, p.stdout, p.stderr)
    elif args.case == "sim64":
        rc, out, err = run(args, 2, common + ["--backend", "sim", "--sim-nodes", "64",
                                              "--model", "resnet50", "--bucket-caps", "5,25"])
        if rc != 0:
            fail("exit %d" % rc, out, err)
        d = check_record(rec, 2, "ddp", out, err)
        run_json = load_run(out_dir)
        rows = run_json["profiles"][0]["results"]
        if rows[0]["ranks"] != 512:
            fail("sim at 64 nodes should model 512 ranks, rows say %s" % rows[0]["ranks"], out, err)
    elif args.case == "hang":
        rc, out, err = run(args, 2, common + ["--backend", "sim", "--timeout", "3",
                                              "-p", "default,ring"],
                           env={"DLCOMM_INJECT": "hang:1:ring"})
        if rc != 3:
            fail("exit %d, want 3" % rc, out, err)
        run_json = load_run(out_dir)
        st = [p["status"] for p in run_json["profiles"]]
        if st != ["ok", "timeout"]:
            fail("profile statuses %s" % st, out, err)
        if run_json.get("exit_code") != 3 or "tune" not in run_json:
            fail("the record does not say how it ended", out, err)
        d = json.load(open(rec))
        if not any(c["measured"] for c in d["candidates"]):
            fail("the finished profile's steps were lost", out, err)
        # The record of a run that broke still charts and reports: the
        # finished profile's line, the other's candidates "not measured".
        p = subprocess.run([args.bin, "plot", rec, "--out", os.path.join(tmp, "plot")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail("plot of a broken run's record: exit %d" % p.returncode, p.stdout, p.stderr)
        page = os.path.join(tmp, "t.html")
        p = subprocess.run([args.bin, "report", rec, "--html", page], capture_output=True, text=True)
        html = open(page).read() if p.returncode == 0 else ""
        if "ended with exit code 3" not in html or "not measured: the profile ended first" not in html:
            fail("report --html of a broken run's record: exit %d" % p.returncode, p.stdout, p.stderr)
    elif args.case == "bad_model":
        bad = [("{\"tensors\": []}", "non-empty list"),
               ("{\"tensors\": [{\"name\": \"a\", \"numel\": 0}]}", "whole number"),
               ("not json", "not a JSON object"),
               ("{\"tensors\": [{\"name\": \"a\", \"numel\": 4, \"dtype\": \"int8\"}]}", "float32")]
        for text, says in bad:
            open(model, "w").write(text)
            rc, out, err = run(args, 2, common + ["--backend", "mpi"])
            lines = [l for l in err.splitlines() if l.startswith("dlcomm:")]
            if rc != 2 or len(lines) != 1 or says not in err or model not in err:
                fail("bad model %r: exit %d" % (text, rc), out, err)
            if os.path.exists(rec) or os.path.exists(out_dir):
                fail("a bad model wrote files", out, err)
        rc, out, err = run(args, 1, ["--model", "nosuch"])
        if rc != 2 or "not a built-in model" not in err:
            fail("unknown model: exit %d" % rc, out, err)
        rc, out, err = run(args, 1, ["--model", "gtp2"])  # a typo names the model meant
        if rc != 2 or "(did you mean 'gpt2'?)" not in err:
            fail("mistyped model: exit %d" % rc, out, err)
        missing = os.path.join(tmp, "absent.json")  # a file's line: the path and the reason
        rc, out, err = run(args, 1, ["--model", missing])
        if rc != 2 or "--model %s: cannot be read: No such file or directory" % missing not in err:
            fail("missing model file: exit %d" % rc, out, err)
        rc, out, err = run(args, 1, ["--model", model, "-e", "1M"])
        if rc != 2 or "sweep option" not in err:
            fail("a sweep-only option: exit %d" % rc, out, err)
        # Every sweep row tune lacks is refused by name, through one table
        # (its spellings too: --maxbytes=1M, -e1M, --split).
        for extra in (["--maxbytes=1M"], ["-e1M"], ["--split", "MOD:2"], ["--format", "nccl-tests"]):
            rc, out, err = run(args, 1, ["--model", model] + extra)
            lines = [l for l in err.splitlines() if l.startswith("dlcomm:")]
            if rc != 2 or len(lines) != 1 or "is a sweep option" not in err:
                fail("sweep option %s: exit %d" % (extra, rc), out, err)
        # --help lists the measurement's rows with tune's defaults.
        p = subprocess.run([args.bin, "tune", "--help"], capture_output=True, text=True)
        if p.returncode != 0 or not re.search(r"--budget SEC +.*\[2\]", p.stdout) \
                or not re.search(r"--backend NAME", p.stdout) or "--maxbytes" in p.stdout:
            fail("tune --help: the measurement's rows", p.stdout, p.stderr)
    elif args.case == "script_file":
        # scripts/model-gradients.py's writer (torch is not installed here: a
        # module stand-in with the same named_parameters() interface), read
        # back by dlcomm: trainable only, names, shapes and dtypes kept.
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
        import importlib
        mg = importlib.import_module("model-gradients")

        class P:
            def __init__(self, shape, dtype="torch.float32", grad=True):
                self.shape, self.dtype, self.requires_grad = shape, dtype, grad

        class M:
            def named_parameters(self):
                return [("emb.weight", P([10, 4])), ("frozen", P([3], grad=False)),
                        ("ln.weight", P([4], "torch.bfloat16")), ("scale", P([]))]

        mg.write_model_file(M(), model, "standin")
        p = subprocess.run([args.bin, "tune", "--model", model, "--plan-only"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail("dlcomm refused the script's file: exit %d" % p.returncode, p.stdout, p.stderr)
        got = [(t["name"], t["shape"], t["dtype"]) for t in json.loads(p.stdout)["model"]["tensors"]]
        want = [("emb.weight", [10, 4], "float32"), ("ln.weight", [4], "bfloat16"),
                ("scale", [1], "float32")]
        if got != want:
            fail("round trip %s, want %s" % (got, want), p.stdout, p.stderr)
    else:
        fail("unknown case " + args.case)
    print("ok", args.case)


if __name__ == "__main__":
    main()
