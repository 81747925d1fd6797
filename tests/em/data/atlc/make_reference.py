#!/usr/bin/python3
"""Thick 50-ohm microstrip lines in cross-section with atlc (Debian package
`atlc`, a finite-difference solver of the 2-D Laplace equation): Z0 and
eeff against Hammerstad and Jensen's thickness-corrected closed forms, to
see whether those forms still hold at t/W = 0.5 (t close to h).

  /usr/bin/python3 tests/em/data/atlc/make_reference.py [--runs runs.tsv]

takes about an hour on two cores (the 200-pixel runs dominate). Each run's
raw figures are kept in runs.tsv (reused when present: delete it to rerun);
the extrapolated table goes to thick_lines.tsv.

The section: ground plane, a substrate of h pixels, a strip of W pixels and
t pixels, all in a grounded box whose walls are `box` pixels from the strip
(sideways) and from the substrate's top. atlc's result depends on the pixel
size and on the box; both are extrapolated from three levels each:

  resolution: W = 50, 100, 200 pixels at a box of 10 h;
  box:        10 h, 20 h and 40 h at W = 50;

each by X = X3 + (X3 - X2)/(q - 1), q = (X2 - X1)/(X3 - X2) the observed
ratio of successive changes, and the two corrections multiplied:
X = X_res(10 h) * X_box(W = 50) / X(W = 50, 10 h). Applied to Z0 and to the
air line's Z0 (atlc prints it first, with the dielectric replaced by vacuum),
eeff = (Z0_air / Z0)^2."""
import argparse, math, os, struct, subprocess, sys, tempfile

ETA0 = 376.730313668
HERE = os.path.dirname(os.path.abspath(__file__))
DIELECTRIC = (0xC0, 0xC0, 0xFF)  # a colour atlc does not predefine; -d gives its eps_r
# (eps_r, h in pixels at W = 100): the test lines of tests/em/test_lines.c,
# W/h 1.112/0.508 = 2.19 and 3.062/1.6 = 1.91, rounded to whole pixels
LINES = [(3.66, 46), (4.4, 52)]
T_OVER_W = [0.1, 0.5]


def hj(u, er):
    """Hammerstad-Jensen (1980), zero thickness: Z0, eeff at u = W/h."""
    a = 1 + math.log((u**4 + (u / 52) ** 2) / (u**4 + 0.432)) / 49 + math.log(1 + (u / 18.1) ** 3) / 18.7
    b = 0.564 * ((er - 0.9) / (er + 3)) ** 0.053
    e = (er + 1) / 2 + (er - 1) / 2 * (1 + 10 / u) ** (-a * b)
    fu = 6 + (2 * math.pi - 6) * math.exp(-((30.666 / u) ** 0.7528))
    z01 = ETA0 / (2 * math.pi) * math.log(fu / u + math.sqrt(1 + 4 / u**2))
    return z01 / math.sqrt(e), e


def hj_thick(u, tn, er):
    """The same with the thickness correction (widths u + du1 in air,
    u + dur in the dielectric), tn = t/h."""
    c = 1 / math.tanh(math.sqrt(6.517 * u))
    du1 = tn / math.pi * math.log(1 + 4 * math.e / (tn * c * c))
    dur = 0.5 * (1 + 1 / math.cosh(math.sqrt(er - 1))) * du1
    z0a, ea = hj(u + du1, 1)
    z0r, eR = hj(u + dur, er)
    return z0r, eR * (z0a * math.sqrt(ea) / (z0r * math.sqrt(eR))) ** 2


def write_bmp(path, w, h, t, box):
    """24-bit BMP, rows stored bottom first; one-pixel box walls."""
    nx, nz = w + 2 * box + 2, h + box + 2
    pad = (4 - (3 * nx) % 4) % 4
    data = bytearray()
    for depth in range(nz):  # bottom row first: depth 0 is the ground wall
        for x in range(nx):
            wall = depth == 0 or depth == nz - 1 or x == 0 or x == nx - 1
            if wall:
                rgb = (0, 255, 0)
            elif depth <= h:
                rgb = DIELECTRIC
            elif depth <= h + t and box + 1 <= x < box + 1 + w:
                rgb = (255, 0, 0)
            else:
                rgb = (255, 255, 255)
            data += bytes((rgb[2], rgb[1], rgb[0]))
        data += b"\0" * pad
    head = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, nx, nz, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(head + info + data)


def atlc(w, h, t, box, er):
    """(Z0, Z0 of the air line) from one atlc run."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "line.bmp")
        write_bmp(path, w, h, t, box)
        out = subprocess.run(["atlc", "-v", "-s", "-S", "-c", "1e-5", "-d", "c0c0ff=%g" % er, path],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    zo = [float(l.split("Zo=")[1].split()[0]) for l in out if "Zo=" in l]
    air = [float(l.split("Zo=")[1].split()[0]) for l in out if "Zo=" in l and "Er=  1.00" in l]
    return zo[-1], air[-1]


def richardson(x1, x2, x3):
    q = (x2 - x1) / (x3 - x2)
    return x3 + (x3 - x2) / (q - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default=os.path.join(HERE, "runs.tsv"))
    ap.add_argument("--out", default=os.path.join(HERE, "thick_lines.tsv"))
    args = ap.parse_args()
    runs = {}
    if os.path.exists(args.runs):
        for line in open(args.runs):
            if line.startswith("#"):
                continue
            w, h, t, box, er, z, za = line.split()
            runs[(int(w), int(h), int(t), int(box), float(er))] = (float(z), float(za))

    def run(w, h, t, box, er):
        key = (w, h, t, box, er)
        if key not in runs:
            runs[key] = atlc(*key)
            with open(args.runs, "a") as f:
                f.write("%d %d %d %d %g %.3f %.3f\n" % (key + runs[key]))
            print("atlc W %d h %d t %d box %d er %g: Z0 %.3f, air %.3f" % (key + runs[key]), file=sys.stderr)
        return runs[key]

    if not os.path.exists(args.runs):
        with open(args.runs, "w") as f:
            f.write("# W h t box eps_r Z0 Z0_air (pixels; atlc -v -s -S -c 1e-5)\n")
    rows = []
    for er, h100 in LINES:
        for tw in T_OVER_W:
            res = [run(w, h100 * w // 100, round(tw * w), 10 * h100 * w // 100, er) for w in (50, 100, 200)]
            h50 = h100 // 2
            box = [run(50, h50, round(tw * 50), k * h50, er) for k in (10, 20, 40)]
            z = richardson(*[r[0] for r in res]) * richardson(*[b[0] for b in box]) / box[0][0]
            za = richardson(*[r[1] for r in res]) * richardson(*[b[1] for b in box]) / box[0][1]
            u = 100 / h100
            zh, eh = hj_thick(u, tw * u, er)
            rows.append((er, u, tw, z, (za / z) ** 2, zh, eh))
    with open(args.out, "w") as f:
        f.write("# eps_r W/h t/W Z0_atlc eeff_atlc Z0_HJ eeff_HJ (atlc extrapolated in pixel size and box; "
                "make_reference.py)\n")
        for r in rows:
            f.write("%g %.6f %.2f %.3f %.4f %.3f %.4f\n" % r)
            print("eps_r %g W/h %.4f t/W %.2f: atlc Z0 %.3f eeff %.4f | HJ %.3f %.4f | %+.2f %% %+.2f %%"
                  % (r + (100 * (r[3] / r[5] - 1), 100 * (r[4] / r[6] - 1))))


if __name__ == "__main__":
    main()
