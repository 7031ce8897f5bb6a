#!/usr/bin/env python3
"""The documentation against the program (ctest -L docs).

  options  every option the README, docs/ and docs/man/ name exists in the
           command it is given to (`dlcomm __options` has the tables), every
           option of a command is mentioned in its docs page or its man page's
           hand-written part, and every option a --help text names exists
  selftest the options check fails on a page naming an option that does not
           exist, and on an option no page mentions
  man      every command has docs/man/dlcomm-CMD.txt and a built page, and no
           page makes man or groff warn
  links    every relative link and #anchor in the Markdown resolves; the README
           is at most about 200 lines and starts with the two set-up commands
  output   the columns a real sweep prints are the ones the sample tables of
           the README, docs/sweep.md and `sweep --help` show, and each is in the legend of
           docs/sweep.md, of --help and of dlcomm-sweep(1)

usage: docs_test.py CHECK SOURCE_DIR DLCOMM [BUILD_DIR | MPIRUN...]
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# The pages that document a command's options (besides docs/man/dlcomm-CMD.txt).
PAGES = {
    "sweep": ["docs/sweep.md", "docs/backends.md"],
    "profiles": ["docs/profiles.md"],
    "compare": ["docs/compare.md"],
    "report": ["docs/compare.md"],
    "plot": ["docs/compare.md"],
    "history": ["docs/compare.md"],
    "tune": ["docs/tune.md"],
    "preflight": ["docs/preflight.md"],
    "topo": ["docs/preflight.md"],
    "watch": ["docs/operations.md"],
    "launch": ["docs/operations.md"],
    "version": ["docs/install.md"],
    "help": ["README.md"],
}
# A command line that also takes another command's options: tune measures
# through sweep's options, watch passes its steps theirs (--sweep ARGS).
ALSO = {"tune": ["sweep"], "watch": ["sweep", "preflight"]}
# Other programs' options that the pages name outside a command line of
# theirs (mpirun's binding and mapping, srun's and sbatch's, systemd's,
# nccl-tests' -J, cmake's and ctest's).
FOREIGN = {"-np", "-x", "-N", "-n", "--map-by", "--bind-to", "--hostfile", "--mca",
           "--oversubscribe", "--allow-run-as-root", "--mpi", "--requeue", "--gpus-per-node",
           "--ntasks-per-node", "--uts", "--now", "--failed", "--warnings", "--cpunodebind",
           "--version", "--tags", "--dirty", "--always", "--install", "--prefix",
           "--build", "--output-on-failure", "-J", "-L", "-j", "-D"}
SEPARATORS = {"|", "||", ";", "&&", "&", ">", ">>", "2>", "<", "#"}
OPTION = re.compile(r"^(--[a-z][a-z0-9_-]*[a-z0-9]|-[A-Za-z])(=.*)?$")


def fail(errors):
    for e in errors:
        print("FAIL:", e)
    sys.exit(1 if errors else 0)


class Tables:
    """Each command's options, from the program itself."""

    def __init__(self, dlcomm):
        self.rows = json.loads(subprocess.run([dlcomm, "__options"], check=True,
                                              capture_output=True, text=True).stdout)
        self.commands = subprocess.run([dlcomm, "__complete", "commands"], check=True,
                                       capture_output=True, text=True).stdout.split()
        self.help = {}
        for c in self.commands:
            if c not in ("help", "version"):
                self.help[c] = subprocess.run([dlcomm, c, "--help"], capture_output=True,
                                              text=True).stdout

    def own(self, cmd):
        """cmd's rows: {spelling: row}; every flag also as --no-NAME."""
        out = {"--help": {"kind": "flag"}, "-h": {"kind": "flag"}}
        for r in self.rows.get(cmd, []):
            out["--" + r["name"]] = r
            if r["kind"] == "flag":
                out["--no-" + r["name"]] = r
            if "short" in r:
                out["-" + r["short"]] = r
        return out

    def vocabulary(self, cmd):
        v = self.own(cmd)
        for other in ALSO.get(cmd, []):
            v = {**self.own(other), **v}
        return v

    def union(self):
        u = {}
        for c in self.commands:
            u.update(self.own(c))
        return u


def spans(path):
    """(line, text, in_block) of every inline code span and code block line;
    a block line continued by a backslash is one line."""
    out, block, pending, para = [], None, "", []

    def prose(lines):  # a paragraph: a code span may run over a line's end
        if not lines:
            return
        text = " ".join(l for _, l in lines)
        for m in re.finditer(r"(?<![\w`/.-])--[a-z][a-z0-9_-]*[a-z0-9]", re.sub(r"`[^`]*`", " ", text)):
            out.append((lines[0][0], m.group(0), False))
        for m in re.finditer(r"`([^`]+)`", text):
            out.append((lines[0][0], m.group(1), False))
        lines.clear()

    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.lstrip().startswith("```"):
            prose(para)
            block = None if block is not None else line.strip()[3:]
            continue
        if block is not None:
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            out.append((n, pending + line, True))
            pending = ""
        elif not line.strip() or line.startswith("|") or line.startswith("#"):
            prose(para)
            if line.strip():
                prose([(n, line)])  # a table row or heading: a paragraph of its own
        else:
            para.append((n, line))
    prose(para)
    return out


def tokens(text):
    text = text.replace("\\|", "|")
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def clean(tok):
    return tok.strip("[](),;:.")


class Checker:
    def __init__(self, tables, where):
        self.t, self.where, self.errors = tables, where, []
        self.union = tables.union()

    def option_token(self, tok):
        tok = clean(tok)
        m = OPTION.match(tok)
        if not m and re.match(r"^-[A-Za-z]\S+$", tok):  # -b8: a short option and its value
            return tok[:2], True
        return (m.group(1), m.group(2) is not None) if m else (None, False)

    def command_line(self, toks, i, cmd):
        """toks[i:] given to dlcomm cmd: each option must be cmd's."""
        vocab = self.t.vocabulary(cmd)
        while i < len(toks):
            tok = toks[i]
            if tok in SEPARATORS or tok.startswith("#"):
                return i
            if cmd == "launch" and not tok.startswith("-"):
                return self.scan(toks, i)  # the launched command line
            if cmd == "watch" and tok == "--":
                return self.scan(toks, i + 1)
            name, inline = self.option_token(tok)
            if name and name not in vocab:
                self.errors.append(f"{self.where}: `dlcomm {cmd} ... {tok}`: {cmd} has no option {name}")
            elif name and not inline and vocab[name].get("kind") != "flag":
                i += 1  # its value
            i += 1
        return i

    def scan(self, toks, i=0):
        """A line that may hold a dlcomm command line among other words."""
        while i < len(toks):
            tok = toks[i]
            base = os.path.basename(tok)
            if base == "dlcomm" and i + 1 < len(toks) and toks[i + 1] in self.t.commands:
                i = self.command_line(toks, i + 2, toks[i + 1])
            elif i == 0 and tok in self.t.commands and tok not in ("help",):
                i = self.command_line(toks, 1, tok)
            else:
                i += 1
        return i

    def bare(self, toks, vocab):
        """A span that starts with an option: every option in it must exist."""
        self.owner = "no dlcomm command" if vocab is self.union else "the page's command"
        for tok in toks:
            name, _ = self.option_token(tok)
            if name and name not in vocab and name not in FOREIGN:
                self.errors.append(f"{self.where}: {tok}: {self.owner} has no option {name}")

    def span(self, text, vocab):
        toks = tokens(text)
        if not toks:
            return
        if self.option_token(toks[0])[0]:
            self.bare(toks, vocab)
        else:
            self.scan(toks)


def check_options(root, tables):
    errors = []
    files = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    texts = sorted(glob.glob(os.path.join(root, "docs", "man", "dlcomm-*.txt")))
    for path in files + texts:
        rel = os.path.relpath(path, root)
        cmd = re.match(r"dlcomm-(\w+)\.txt$", os.path.basename(path))
        # A man text is one command's, a command's page its commands': an
        # option alone there must be theirs; a topic page's, any command's.
        owners = [cmd.group(1)] if cmd else [c for c, p in PAGES.items() if rel in p and rel != "README.md"]
        vocab = {}
        for o in owners:
            vocab.update(tables.vocabulary(o))
        for line, text, _ in spans(path) if path.endswith(".md") else text_spans(path):
            c = Checker(tables, f"{rel}:{line}")
            c.span(text, vocab or c.union)
            errors += c.errors
    errors += check_documented(root, tables)
    errors += check_help(tables)
    return errors


def text_spans(path):
    """A man text's code spans, literal lines and options in its prose."""
    out = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("    "):
            out.append((n, line.strip(), True))
            continue
        for m in re.finditer(r"`([^`]+)`", line):
            out.append((n, m.group(1), False))
        for m in re.finditer(r"(?<![\w`/.-])--[a-z][a-z0-9_-]*[a-z0-9]", re.sub(r"`[^`]*`", " ", line)):
            out.append((n, m.group(0), False))
    return out


def mentioned(text, spelling):
    return re.search(r"(?<![\w-])" + re.escape(spelling) + r"(?![\w-])", text) is not None


def check_documented(root, tables):
    """Every option of a command is named in its page or its man text."""
    errors = []
    for cmd in tables.commands:
        paths = [os.path.join(root, p) for p in PAGES.get(cmd, [])]
        paths.append(os.path.join(root, "docs", "man", f"dlcomm-{cmd}.txt"))
        if cmd not in PAGES:
            errors.append(f"command {cmd} has no documentation page (PAGES in {__file__})")
        text = "".join(open(p, encoding="utf-8").read() for p in paths if os.path.exists(p))
        for r in tables.rows.get(cmd, []):
            spellings = ["--" + r["name"]] + (["-" + r["short"]] if "short" in r else [])
            if not any(mentioned(text, s) for s in spellings):
                errors.append(f"{cmd} option --{r['name']} is mentioned in none of "
                              + ", ".join(os.path.relpath(p, root) for p in paths))
    return errors


def check_help(tables):
    """The options a --help text names (in its description or another row's
    help) are the command's."""
    errors = []
    for cmd, text in tables.help.items():
        for line in text.splitlines():
            for m in re.finditer(r"(?<![\w/-])--[a-z][a-z0-9_-]*[a-z0-9]", line):
                # "dlcomm tune --json" names another command's option
                other = re.search(r"dlcomm (\w+)[^(),;]*$", line[:m.start()])
                owner = other.group(1) if other and other.group(1) in tables.commands else cmd
                if m.group(0) not in tables.vocabulary(owner) and m.group(0) not in FOREIGN:
                    errors.append(f"dlcomm {cmd} --help names {m.group(0)}, which {owner} does not have")
    return errors


def selftest(root, tables):
    """The check fails where it must: a copy of the docs with an option that
    does not exist, and one with an option nobody mentions."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in ("unknown", "prose", "undocumented"):
            copy = os.path.join(tmp, case)
            shutil.copytree(os.path.join(root, "docs"), os.path.join(copy, "docs"))
            shutil.copy(os.path.join(root, "README.md"), copy)
            if case == "unknown":
                with open(os.path.join(copy, "docs", "sweep.md"), "a") as f:
                    f.write("\n```sh\nmpirun -np 2 dlcomm sweep -b 8 --no-such-option 3\n```\n")
                want = "sweep has no option --no-such-option"
            elif case == "prose":
                with open(os.path.join(copy, "docs", "compare.md"), "a") as f:
                    f.write("\nUse `--threshhold 3` to judge.\n")
                want = "has no option --threshhold"
            else:
                for p in PAGES["compare"] + ["docs/man/dlcomm-compare.txt"]:
                    path = os.path.join(copy, p)
                    text = open(path).read().replace("--min-size", "the smallest size")
                    open(path, "w").write(text)
                want = "compare option --min-size is mentioned in none"
            errors = check_options(copy, tables)
            if not any(want in e for e in errors):
                problems.append(f"selftest {case}: the check did not say '{want}' ({errors[:3]})")
            elif len(errors) > 3:
                problems.append(f"selftest {case}: more than the one planted error: {errors[:4]}")
    return problems


def check_man(root, tables, build):
    errors = []
    texts = {os.path.basename(p)[7:-4] for p in glob.glob(os.path.join(root, "docs", "man", "dlcomm-*.txt"))}
    for cmd in tables.commands:
        if cmd not in texts:
            errors.append(f"command {cmd} has no docs/man/dlcomm-{cmd}.txt (its man page's own text)")
    for cmd in texts - set(tables.commands):
        errors.append(f"docs/man/dlcomm-{cmd}.txt: dlcomm has no command {cmd}")
    pages = [os.path.join(build, "man", "dlcomm.1")] + \
            [os.path.join(build, "man", f"dlcomm-{c}.1") for c in tables.commands]
    env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MAN_KEEP_FORMATTING="")
    for page in pages:
        if not os.path.exists(page):
            errors.append(f"{page} was not built")
            continue
        for width in ("80", "64", "120"):
            r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", page],
                               env=dict(env, MANWIDTH=width), capture_output=True, text=True)
            if r.returncode != 0 or r.stderr.strip():
                errors.append(f"man --warnings -l {page} (MANWIDTH={width}): exit {r.returncode}: {r.stderr.strip()}")
        r = subprocess.run(["groff", "-ww", "-z", "-man", "-Tutf8", page], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            errors.append(f"groff -ww {page}: exit {r.returncode}: {r.stderr.strip()}")
        text = open(page).read()
        name = os.path.basename(page)[:-2]
        if name != "dlcomm" and "\\fBdlcomm\\fR(1)" not in text:
            errors.append(f"{page}: SEE ALSO does not name dlcomm(1)")
        if name == "dlcomm":
            for c in tables.commands:
                if f"\\fBdlcomm\\-{c}\\fR(1)" not in text:
                    errors.append(f"dlcomm(1) does not list dlcomm-{c}(1)")
    return errors


def slug(heading):
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


def anchors(path):
    seen, out, block = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            block = not block
        m = re.match(r"^(#{1,6}) (.*)", line)
        if m and not block:
            s = slug(m.group(2))
            n = seen.get(s, 0)
            out.add(s if n == 0 else f"{s}-{n}")
            seen[s] = n + 1
    return out


def check_links(root):
    errors = []
    files = [os.path.join(root, "README.md"), os.path.join(root, "results", "README.md")] + \
        sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    for path in files:
        text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            rel = os.path.relpath(path, root)
            if not os.path.exists(dest):
                errors.append(f"{rel}: link to {target}: {os.path.relpath(dest, root)} does not exist")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                errors.append(f"{rel}: link to {target}: no heading #{anchor} there")
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read().split("\n")
    if len(readme) > 210:
        errors.append(f"README.md has {len(readme)} lines; the entry point stays at about 200")
    first = re.search(r"```sh\n(.*?)```", "\n".join(readme), re.S)
    cmds = [l.split("#")[0].strip() for l in first.group(1).splitlines()] if first else []
    want = ["./scripts/quickstart.sh", "./scripts/install-deps.sh && ./scripts/run-tests.sh"]
    if cmds != want:
        errors.append(f"README.md's first commands are {cmds}, not {want}")
    for s in ("quickstart.sh", "install-deps.sh", "run-tests.sh"):
        if not os.access(os.path.join(root, "scripts", s), os.X_OK):
            errors.append(f"scripts/{s} is not executable")
    return errors


def header_columns(text):
    """The column names of a sweep table's first header line in text."""
    m = re.search(r"^\s*#\s+(size\s+count\s.*)$", text, re.M)
    return m.group(1).split() if m else None


def check_output(root, tables, dlcomm, mpirun):
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(mpirun + ["-np", "2", dlcomm, "sweep", "-c", "allreduce", "-b", "8",
                                     "-e", "8", "-n", "2", "-w", "0", "--placement", "out",
                                     "--out", os.path.join(tmp, "run")],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return [f"the sweep exited {r.returncode}: {r.stderr.strip()}"]
    real = header_columns(r.stdout)
    if not real:
        return [f"no table header in the sweep's output: {r.stdout[:300]}"]
    doc = open(os.path.join(root, "docs", "sweep.md"), encoding="utf-8").read()
    legend = doc[doc.index("## Reading the table"):doc.index("## Choosing what to measure")]
    man = re.sub(r"\\f[BIR]|\\&|\\:", "", open(os.path.join(os.path.dirname(dlcomm), "man",
                                                           "dlcomm-sweep.1")).read())
    man = man.replace("\\-", "-")
    hlp = tables.help["sweep"].split("\nOptions:")[0]
    # The README's sample: its columns too (the legend is docs/sweep.md's).
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    if header_columns(readme) != real:
        errors.append(f"README.md: the sample table's columns {header_columns(readme)} are not the sweep's {real}")
    for where, text in (("docs/sweep.md", legend), ("sweep --help", hlp), ("dlcomm-sweep(1)", man)):
        sample = header_columns(text)
        if sample != real:
            errors.append(f"{where}: the sample table's columns {sample} are not the sweep's {real}")
        # the legend: the lines that are not the sample (its header, units, rows)
        legend_lines = [l for l in text.splitlines()
                        if not header_columns(l) and "(B)" not in l and not re.match(r"^\s*\d", l)]
        for col in real:
            pat = (r"^\|[^|\n]*`" + re.escape(col) + "`" if where == "docs/sweep.md"
                   else r"(?<![\w#])" + re.escape(col) + r"(?!\w)")
            if not re.search(pat, "\n".join(legend_lines), re.M):
                errors.append(f"{where}: the legend does not say what column {col} is")
    return errors


def main():
    check, root, dlcomm = sys.argv[1], sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    tables = Tables(dlcomm)
    if check == "options":
        fail(check_options(root, tables))
    elif check == "selftest":
        fail(selftest(root, tables))
    elif check == "man":
        fail(check_man(root, tables, rest[0]))
    elif check == "links":
        fail(check_links(root))
    elif check == "output":
        fail(check_output(root, tables, dlcomm, rest))
    else:
        fail([f"unknown check {check}"])


if __name__ == "__main__":
    main()
