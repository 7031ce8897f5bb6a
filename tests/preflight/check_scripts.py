#!/usr/bin/env python3
"""Syntax checks of the scripts around preflight: the MPIJob manifest parses
as YAML with the fields mpi-operator v2beta1 needs (a structural check where
PyYAML is absent), and every Containerfile instruction is a known keyword."""
import os
import re
import sys

KEYWORDS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
            "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}


def check_containerfile(path):
    instructions, cont = [], False
    for n, raw in enumerate(open(path), 1):
        line = raw.rstrip("\n")
        if not cont and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not cont:
            word = line.split()[0]
            assert word.upper() == word and word in KEYWORDS, f"{path}:{n}: unknown instruction {word!r}"
            instructions.append(word)
        cont = line.rstrip().endswith("\\")
    assert not cont, f"{path}: ends inside a continued line"
    first = [i for i in instructions if i != "ARG"]
    assert first and first[0] == "FROM", f"{path}: the first instruction after ARGs must be FROM"
    for need in ("RUN", "COPY"):
        assert need in instructions, f"{path}: no {need}"


def structural_yaml(text):
    """Without PyYAML: indentation in steps of two, no tabs, key lines well formed."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        assert "\t" not in line, f"line {n}: tab"
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"line {n}: odd indentation"
        body = line.strip()
        assert body.startswith("- ") or re.match(r'^[A-Za-z0-9_./"-]+:( |$)', body), f"line {n}: {body}"
    return None


def check_mpijob(path):
    text = open(path).read()
    try:
        if os.environ.get("CHECK_NO_YAML"):  # exercise the fallback
            raise ImportError
        import yaml
    except ImportError:
        structural_yaml(text)
        for key in ("apiVersion: kubeflow.org/v2beta1", "kind: MPIJob", "Launcher:", "Worker:"):
            assert key in text, f"{path}: no {key}"
        print("PyYAML absent: structural check only")
        return
    doc = yaml.safe_load(text)
    assert doc["apiVersion"] == "kubeflow.org/v2beta1" and doc["kind"] == "MPIJob", doc
    spec = doc["spec"]
    assert spec["slotsPerWorker"] >= 1
    reps = spec["mpiReplicaSpecs"]
    launcher = reps["Launcher"]["template"]["spec"]["containers"][0]
    worker = reps["Worker"]["template"]["spec"]["containers"][0]
    args = launcher["command"] + launcher["args"]
    assert "preflight" in args and "--json" in args, args
    np = int(args[args.index("-np") + 1])
    assert np == spec["slotsPerWorker"] * reps["Worker"]["replicas"], "np != slots x workers"
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == spec["slotsPerWorker"]


if __name__ == "__main__":
    scripts = sys.argv[1]
    check_containerfile(f"{scripts}/Containerfile")
    check_mpijob(f"{scripts}/k8s-mpijob.yaml")
    print("Containerfile and k8s-mpijob.yaml: ok")
