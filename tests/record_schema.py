"""The run record's schema (docs/schema/run.schema.json) as the tests use it:
validate(doc, what) returns the list of what does not match, each as
"WHAT: path.to.field: message" (empty: valid). The validator is
python3-jsonschema (scripts/install-deps.sh), Debian's copy taken when the
interpreter running the tests has none of its own."""
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

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schema",
                           "run.schema.json")
_validator = None


def validator():
    global _validator
    if _validator is None:
        if jsonschema is None:
            raise SystemExit("python3-jsonschema is not installed (scripts/install-deps.sh)")
        with open(SCHEMA_PATH) as f:
            schema = json.load(f)
        jsonschema.Draft7Validator.check_schema(schema)
        _validator = jsonschema.Draft7Validator(schema)
    return _validator


def validate(doc, what="run.json"):
    out = []
    for e in sorted(validator().iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in e.absolute_path) or "(top)"
        out.append("%s: %s: %s" % (what, where, e.message[:300]))
    return out


def validate_file(path):
    with open(path) as f:
        return validate(json.load(f), path)
