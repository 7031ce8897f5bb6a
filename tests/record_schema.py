"""The schemas of dlcomm's documents as the tests use them: run.json
(docs/schema/run.schema.json) and preflight --json
(docs/schema/preflight.schema.json). validate(doc, what) returns the list of
what does not match, each "WHAT: path.to.field: message" (empty: valid);
the schema is the preflight one for a document with a verdict and no
profiles. The validator is python3-jsonschema (scripts/install-deps.sh),
Debian's copy taken when the interpreter running the tests has none.
As a program: record_schema.py FILE... checks each file, exit 1 on any
mismatch."""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")  # Debian's, under another interpreter
    try:
        import jsonschema
    except ImportError:
        jsonschema = None

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schema")
_validators = {}


def validator(name):
    if name not in _validators:
        if jsonschema is None:
            raise SystemExit("python3-jsonschema is not installed (scripts/install-deps.sh)")
        with open(os.path.join(SCHEMAS, name + ".schema.json")) as f:
            schema = json.load(f)
        jsonschema.Draft7Validator.check_schema(schema)
        _validators[name] = jsonschema.Draft7Validator(schema)
    return _validators[name]


def kind(doc):
    if isinstance(doc, dict) and "verdict" in doc and "profiles" not in doc:
        return "preflight"
    return "run"


def validate(doc, what="run.json"):
    out = []
    v = validator(kind(doc))
    for e in sorted(v.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = ".".join(str(p) for p in e.absolute_path) or "(top)"
        out.append("%s: %s: %s" % (what, where, e.message[:300]))
        # oneOf: say what each branch missed
        for c in sorted(e.context or [], key=lambda c: [str(p) for p in c.absolute_path])[:10]:
            out.append("  %s: %s" % (".".join(str(p) for p in c.absolute_path) or "(top)", c.message[:200]))
    return out


def validate_file(path):
    with open(path) as f:
        return validate(json.load(f), path)


if __name__ == "__main__":
    errors = [e for path in sys.argv[1:] for e in validate_file(path)]
    print("\n".join(errors) if errors else "ok: %d file(s) match their schema" % (len(sys.argv) - 1))
    sys.exit(1 if errors or len(sys.argv) < 2 else 0)
