"""What every validation report shares: the machine it ran on, the date,
Touchstone files as arrays, gnuplot, and the report's Markdown file.

The generators (scripts/validation/*.py) run under the project's virtual
environment (`make python`; scripts/validation/run passes its interpreter)
and are started by `make validation`, which writes docs/validation/."""
import datetime
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT_DOCS = os.path.join(ROOT, "docs", "validation")
OUT_IMG = os.path.join(OUT_DOCS, "img")

# The Touchstone reader the reference data's own scripts use (one owner).
sys.path.insert(0, os.path.join(ROOT, "tests", "em", "data", "openems"))
from touchstone import read_touchstone  # noqa: E402


def today():
    """The report's date (UTC), or SV_VALIDATION_DATE when set (to regenerate
    a dated report under its own name)."""
    return os.environ.get("SV_VALIDATION_DATE") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def machine():
    """CPU model, logical cores and whether AVX-512 is there, from /proc/cpuinfo."""
    model, cores, flags = "unknown CPU", 0, set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name":
                model = value.strip()
            elif key == "processor":
                cores += 1
            elif key == "flags":
                flags = set(value.split())
    avx512 = "yes" if "avx512f" in flags else "no"
    return "%s, %d logical cores, AVX-512: %s" % (model, cores, avx512)


def s2p(path):
    """(frequencies in GHz, S as an nf x 4 complex array [S11, S21, S12, S22])."""
    table = read_touchstone(path)
    f = np.array(sorted(table))
    return f, np.array([table[x] for x in f])


def db(s):
    return 20 * np.log10(np.maximum(np.abs(s), 1e-300))


def gnuplot(script_name, **variables):
    """Runs scripts/validation/SCRIPT_NAME with the variables set (strings
    quoted, numbers as they are)."""
    args = []
    for k, v in variables.items():
        args += ["-e", "%s=%s" % (k, ('"%s"' % v) if isinstance(v, str) else repr(v))]
    subprocess.run(["gnuplot"] + args + [os.path.join(HERE, script_name)], check=True)


def write_table(path, columns, rows):
    """A whitespace-separated data file for gnuplot, one header comment."""
    with open(path, "w") as f:
        f.write("# " + " ".join(columns) + "\n")
        for r in rows:
            f.write(" ".join(repr(float(x)) if not isinstance(x, str) else x for x in r) + "\n")


def md_table(header, rows):
    """A Markdown table; a "|" inside a cell (|S21|) is escaped."""
    cell = lambda c: str(c).replace("|", "\\|")
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


class Report:
    """docs/validation/DATE-NAME.md and its images docs/validation/img/DATE-NAME-*.png."""

    def __init__(self, name, title):
        self.date = today()
        self.stem = "%s-%s" % (self.date, name)
        self.title = title
        self.parts = []
        os.makedirs(OUT_IMG, exist_ok=True)

    def image(self, suffix):
        """(path to write, path relative to the report) of one of its images."""
        rel = "img/%s-%s.png" % (self.stem, suffix)
        return os.path.join(OUT_DOCS, rel), rel

    def add(self, text):
        self.parts.append(text.strip("\n"))

    def write(self, commands, summary):
        head = ["# %s" % self.title, "",
                "*Generated %s by `make validation` on %s.*" % (self.date, machine()), "",
                summary.strip(), "",
                "## Reproduce", "", "```sh", commands.strip(), "```"]
        path = os.path.join(OUT_DOCS, self.stem + ".md")
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(head + [""] + ["\n\n".join(self.parts)]) + "\n")
        os.replace(path + ".tmp", path)
        print("wrote", os.path.relpath(path, ROOT))
