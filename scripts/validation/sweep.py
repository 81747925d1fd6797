"""Runs `solvent sweep` on a project written to a work folder, as a user
would: one owner for how the validation generators call the tool."""
import json
import os
import subprocess
import time

from common import ROOT, s2p

SOLVENT = os.environ.get("SOLVENT", os.path.join(ROOT, "build", "solvent"))
WORK = os.environ.get("SV_VALIDATION_WORK", os.path.join(ROOT, "out", "validation"))


def command_line(project_path, out_path, args):
    return [SOLVENT, "sweep", project_path, "-o", out_path, "--quiet"] + list(args)


def sweep(name, project, args=()):
    """Writes WORK/NAME.json, sweeps it into WORK/NAME.s2p and returns
    (f in GHz, S nf x 4, seconds of wall time)."""
    os.makedirs(WORK, exist_ok=True)
    pj, out = os.path.join(WORK, name + ".json"), os.path.join(WORK, name + ".s2p")
    with open(pj, "w") as f:
        json.dump(project, f, indent=1)
    t0 = time.monotonic()
    subprocess.run(command_line(pj, out, args), check=True)
    seconds = time.monotonic() - t0
    f, s = s2p(out)
    return f, s, seconds
