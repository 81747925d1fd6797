"""docs/validation/README.md: the index of every dated report in the folder,
newest first, by topic (each report's first line is its title)."""
import glob
import os

from common import OUT_DOCS

TOPICS = [("planar-momentum", "Planar model against ADS Momentum"),
          ("planar-openems", "Planar model against openEMS"),
          ("planar-closed-forms", "Planar model against closed forms (lines: Z0, εeff, thickness, losses)"),
          ("ode-work-precision", "ODE work–precision diagrams"),
          ("performance", "Performance: benchmark ratios")]


def main():
    reports = sorted((os.path.basename(p) for p in glob.glob(os.path.join(OUT_DOCS, "????-??-??-*.md"))), reverse=True)
    out = ["# Validation reports", "",
           "Each report is generated, with its plots, by `make validation` (scripts/validation/run) from the",
           "reference data committed in the repository, and says the date, the machine and the commands that",
           "reproduce it. A newer run adds reports under its own date; the older ones stay as the record.",
           "Figures quoted elsewhere in the documentation come from the newest report of their topic.", ""]
    for key, title in TOPICS:
        mine = [r for r in reports if r[11:-3] == key]
        if not mine:
            continue
        out.append("## %s\n" % title)
        out += ["- [%s](%s)" % (r[:10], r) for r in mine]
        out.append("")
    with open(os.path.join(OUT_DOCS, "README.md"), "w") as f:
        f.write("\n".join(out))
    print("wrote docs/validation/README.md")


if __name__ == "__main__":
    main()
