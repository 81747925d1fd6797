"""`solvent serve`'s HTTP API with a plain client: every endpoint, every
refusal (traversal, symlink escape, oversize body, foreign Origin, foreign
Host, malformed input, a busy tab, a run that would not fit) and a
cancelled job, with the server still answering after each.

References: the Touchstone file and the GDSII layout are compared with
`solvent sweep` and `solvent gds` on the same project; live mode's S after
a pixel flip with a direct solve of the flipped map (the planar job, every
frequency exact) at the same frequencies.

usage: test_api.py SOLVENT SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from serve_harness import Server, read_touchstone  # noqa: E402

SOLVENT, SRC = sys.argv[1], sys.argv[2]
EX = os.path.join(SRC, "examples")
BOARD = os.path.join(EX, "design", "board.json")
PIXEL2PORT = os.path.join(EX, "pixel2port.json")
LINE = os.path.join(EX, "line_44.json")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def still_answers(srv, after):
    check(srv.alive(), f"the server still answers after {after}")


def test_page_and_refusals(srv):
    st, _, raw, hdr = srv.request("GET", "/")
    check(st == 200 and b"<title>Solvent</title>" in raw, "GET / serves the page")
    check("default-src 'self'" in hdr.get("Content-Security-Policy", ""), "the page is limited to its own origin")
    for path in ["/app.js", "/app.css"]:
        st, _, raw, _ = srv.request("GET", path)
        check(st == 200 and len(raw) > 100, f"GET {path}")
    for path in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc/passwd", "//etc/passwd",
                 "/.hidden", "/web/../../etc/passwd"]:
        st, _, raw, _ = srv.request("GET", path)
        check(st in (400, 403, 404) and b"root:" not in raw, f"traversal {path} refused ({st})")
        still_answers(srv, "a traversal")
    os.symlink("/etc/passwd", os.path.join(srv.dir, "escape.json"))
    st, doc, raw, _ = srv.request("POST", "/api/open?name=escape.json")
    check(st == 403 and b"root:" not in raw, f"a symlink out of the served folder refused ({st}: {doc})")
    for name in ["../x.json", "a/../../x.json", "/etc/passwd", ".hidden.json", ""]:
        st, doc, _, _ = srv.request("POST", "/api/open?name=" + name)
        check(st in (400, 403, 404), f"open name {name!r} refused ({st})")
    st, doc, _, _ = srv.request("PUT", "/api/file?name=../outside.json", "{}")
    check(st == 400 and not os.path.exists(os.path.join(os.path.dirname(srv.dir), "outside.json")),
          "save outside the served folder refused")
    still_answers(srv, "file refusals")

    st, doc, _, _ = srv.request("PUT", "/api/project", "x" * (5 << 20))
    check(st == 413 and "larger than" in doc["error"], "an oversize body refused (413)")
    still_answers(srv, "an oversize body")
    st, doc, _, _ = srv.request("GET", "/api/project", headers={"Origin": "http://evil.example"})
    check(st == 403 and "Origin" in doc["error"], "a foreign Origin refused (403)")
    st, doc, _, _ = srv.request("PUT", "/api/project", "{}", headers={"Origin": "http://127.0.0.1:1"})
    check(st == 403, "another port's Origin refused")
    st, doc, _, _ = srv.request("GET", "/api/project", headers={"Origin": f"http://{srv.host}"})
    check(st == 200, "the server's own Origin accepted")
    st, doc, _, _ = srv.request("GET", "/api/job?client=abcdefgh", client=None, headers={"Sec-Fetch-Site": "cross-site"})
    check(st == 403, "an API request another site embeds (Sec-Fetch-Site: cross-site, no Origin) refused")
    st, doc, _, _ = srv.request("GET", "/", headers={"Sec-Fetch-Site": "cross-site"})
    check(st == 200, "another site may link to the page itself")
    st, doc, _, _ = srv.request("GET", "/", host=f"evil.example:{srv.port}")
    check(st == 421 and "Host" in doc["error"], "a foreign Host (DNS rebinding) refused (421)")
    st, doc, _, _ = srv.request("GET", "/", host=f"localhost:{srv.port}")
    check(st == 200, "Host localhost:PORT accepted")
    still_answers(srv, "Host and Origin refusals")

    st, doc, _, _ = srv.request("GET", "/api/project", client=None)
    check(st == 400 and "X-Solvent-Client" in doc["error"], "a request without the tab's id refused")
    st, doc, _, _ = srv.request("GET", "/api/project", client="bad id!")
    check(st == 400, "a malformed tab id refused")
    st, doc, _, _ = srv.request("GET", "/api/nothing")
    check(st == 404, "an unknown endpoint is 404")
    st, doc, _, _ = srv.request("PATCH", "/api/project", "{}")
    check(st == 405, "a wrong method is 405")
    still_answers(srv, "bad requests")


def test_project(srv):
    st, doc, _, _ = srv.request("GET", "/api/project")
    check(st == 200 and doc["project"]["grid"]["nx"] == 44 and len(doc["project"]["pixels"]) == 44,
          "GET /api/project: the start project with its pixels")
    prj = doc["project"]
    st, doc, _, _ = srv.request("PUT", "/api/project", "{not json")
    check(st == 400 and doc["error"], f"malformed JSON refused with the library's message: {doc['error']}")
    bad = json.loads(json.dumps(prj))
    bad["substrate"]["eps_r"] = -2
    st, doc, _, _ = srv.request("PUT", "/api/project", bad)
    check(st == 400 and "eps_r" in doc["error"], f"a bad field refused naming it: {doc['error']}")
    bad = json.loads(json.dumps(prj))
    bad["pixels"] = {"csv": "/etc/passwd"}
    st, doc, _, _ = srv.request("PUT", "/api/project", bad)
    check(st == 400 and "inline" in doc["error"], "a project naming a file on the server refused")
    for body in ["[1,2]", "", "null", '{"a":' * 2000]:
        st, doc, _, _ = srv.request("POST", "/api/sweep", body)
        check(st == 400, f"sweep body {body[:12]!r} refused")
    st, doc, _, _ = srv.request("POST", "/api/sweep", {"points": "many"})
    check(st == 400 and "points" in doc["error"], "a sweep field of the wrong type refused naming it")
    st, doc, _, _ = srv.request("POST", "/api/sweep", {"pionts": 3})
    check(st == 400 and "pionts" in doc["error"], "an unknown sweep field refused naming it")
    still_answers(srv, "malformed input")
    st, doc, _, _ = srv.request("PUT", "/api/project", json.load(open(BOARD)))
    # the dataset's board: 8-mil cells, ports over y = 16 ... 72 mil at x = 0 and 280 mil
    check(st == 200 and doc.get("port_cells") == [[35 * j for j in range(2, 9)], [34 + 35 * j for j in range(2, 9)]],
          "a project's answer names each port's cells as the library places them")
    st, doc, _, _ = srv.request("PUT", "/api/project", prj)
    check(st == 200, "PUT /api/project accepts the project back")
    st, doc, _, _ = srv.request("GET", "/api/files")
    check(st == 200 and "pixel2port.json" in doc["files"], "GET /api/files lists the served folder")
    rows = "\n".join(",".join("1" if c == "#" else "0" for c in row) for row in prj["pixels"]) + "\n"
    st, doc, _, _ = srv.request("PUT", "/api/file?name=map.csv", rows)
    check(st == 200 and open(os.path.join(srv.dir, "map.csv")).read() == rows, "PUT /api/file saves a CSV map")
    st, _, raw, _ = srv.request("GET", "/api/file?name=map.csv")
    check(st == 200 and raw.decode() == rows, "GET /api/file reads it back")
    st, doc, _, _ = srv.request("GET", "/api/file?name=escape.json")
    check(st == 403, "GET /api/file of a link out of the folder refused")
    st, doc, _, _ = srv.request("PUT", "/api/file?name=x.sh", "echo")
    check(st == 400, "PUT /api/file of another kind of file refused")


def test_sweep_matches_tool(srv):
    """The page's sweep and its Touchstone file against `solvent sweep` on the same project."""
    st, doc, _, _ = srv.request("POST", "/api/open?name=line_44.json")
    check(st == 200, "open line_44.json from the served folder")
    band = {"start_hz": 1e9, "stop_hz": 5e9, "points": 41}
    st, doc, _, _ = srv.request("POST", "/api/memory", band)
    check(st == 200 and doc["fits"] and doc["estimate"]["total"] > 0, "POST /api/memory: the library's estimate")
    st, doc, _, _ = srv.request("POST", "/api/sweep", band)
    check(st == 202 and doc["state"] == "running", "POST /api/sweep starts the job")
    job = srv.wait_job()
    check(job["state"] == "done" and job["fraction"] == 1, f"the sweep ends done ({job})")
    check(job.get("estimate", {}).get("total", 0) > 0, "the job shows the library's memory estimate")
    st, res, _, _ = srv.request("GET", "/api/sweep")
    rep = res["report"]
    check(st == 200 and len(res["freq_hz"]) == 41 and sum(res["exact"]) == rep["exact_solves"],
          "the result marks as many exact frequencies as the report's exact solves")
    st, _, ts, hdr = srv.request("GET", "/api/sweep/touchstone")
    check(st == 200 and "sweep.s2p" in hdr.get("Content-Disposition", ""), "GET /api/sweep/touchstone")
    st, prj, _, _ = srv.request("GET", "/api/project")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        with open(path, "w") as f:
            json.dump(prj["project"], f)
        out = os.path.join(tmp, "p.s2p")
        subprocess.run([SOLVENT, "sweep", path, "-o", out, "--start", "1GHz", "--stop", "5GHz", "--points", "41",
                        "--quiet"], check=True)
        f1, r1 = read_touchstone(ts.decode())
        f2, r2 = read_touchstone(open(out).read())
        err = max(abs(a - b) for x, y in zip(r1, r2) for a, b in zip(x, y))
        check(f1 == f2 and len(r1) == 41 and err <= 1e-12, f"Touchstone = solvent sweep's (max diff {err:.1e})")
        gds = os.path.join(tmp, "p.gds")
        subprocess.run([SOLVENT, "gds", path, "-o", gds], check=True)
        st, _, g, _ = srv.request("GET", "/api/gds")
        check(st == 200 and g == open(gds, "rb").read(), "GET /api/gds = solvent gds's file")
    s21 = res["s"]["S21"]
    check(all(abs(d - 20 * __import__("math").log10(abs(complex(a, b)))) < 1e-9
              for d, a, b in zip(s21["db"], s21["re"], s21["im"])), "dB values are 20 log10 |S| of the complex S")


def test_busy_and_cancel(srv):
    st, _, _, _ = srv.request("POST", "/api/open?name=pixel2port.json")
    st, doc, _, _ = srv.request("POST", "/api/sweep", {"exact": True, "points": 60})
    check(st == 202, "a long sweep starts")
    st, doc, _, _ = srv.request("POST", "/api/sweep", {})
    check(st == 409 and "running" in doc["error"], "a second job of the same tab refused (409)")
    st, doc, _, _ = srv.request("POST", "/api/live", {"region": "0"})
    check(st == 409 or st == 400, "live mode refused while the sweep runs")
    st, doc, _, _ = srv.request("GET", "/api/job", client="another-tab-1")
    check(st == 200 and doc["state"] == "idle", "another tab is not busy")
    time.sleep(0.5)
    t0 = time.time()
    st, doc, _, _ = srv.request("DELETE", "/api/job")
    check(st == 200, "DELETE /api/job")
    job = srv.wait_job()
    check(job["state"] == "cancelled", f"the job is cancelled ({job['state']}) in {time.time() - t0:.2f} s")
    still_answers(srv, "a cancelled job")
    st, doc, _, _ = srv.request("POST", "/api/live", {"region": "0" * (44 * 44)})
    job = srv.wait_job()
    check(job["state"] == "failed" and "thick" in job.get("message", ""),
          f"live mode on thick metal refused with the library's reason: {job.get('message')}")


def test_closed_tab(srv):
    """A tab that stops asking about its job (closed) has it stopped."""
    tab = "closed-tab-1"
    st, _, _, _ = srv.request("POST", "/api/open?name=pixel2port.json", client=tab)
    st, doc, _, _ = srv.request("POST", "/api/sweep", {"exact": True, "points": 400}, client=tab)
    check(st == 202, "a long sweep starts in a tab that then closes")
    time.sleep(14)
    st, job, _, _ = srv.request("GET", "/api/job", client=tab)
    check(job["state"] == "cancelled" and "has not asked" in job.get("message", ""),
          f"its job is stopped by the watchdog ({job['state']}: {job.get('message')})")
    still_answers(srv, "a closed tab")


def test_live(srv):
    st, doc, _, _ = srv.request("POST", "/api/open?name=board.json")
    check(st == 200, "open board.json")
    nx, ny = 35, 11
    region = "".join("1" if 13 <= i <= 21 else "0" for j in range(ny) for i in range(nx))
    st, doc, _, _ = srv.request("POST", "/api/live/flip", {"cells": [13]})
    check(st == 404, "a flip before live mode starts is refused")
    st, doc, _, _ = srv.request("POST", "/api/live", {"region": region[:-1]})
    check(st == 400 and "region" in doc["error"], "a region of the wrong size refused")
    st, doc, _, _ = srv.request("POST", "/api/live", {"region": region, "points": 5})
    check(st == 202, "POST /api/live starts the evaluator")
    job = srv.wait_job()
    check(job["state"] == "done", f"live mode ready ({job})")
    st, s0, _, _ = srv.request("GET", "/api/live")
    check(st == 200 and len(s0["freq_hz"]) == 5, "GET /api/live: S at 5 frequencies")
    cells = [i + nx * j for j in range(2, 9) for i in (16, 17, 18)]
    st, s1, _, _ = srv.request("POST", "/api/live/flip", {"cells": cells})
    check(st == 200 and s1["s"]["S21"]["db"] != s0["s"]["S21"]["db"], "a flip changes S")
    st, doc, _, _ = srv.request("POST", "/api/live/flip", {"cells": [0]})
    check(st == 400 and doc["error"], f"a flip outside the region refused: {doc['error']}")
    st, doc, _, _ = srv.request("POST", "/api/live/flip", {"cells": ["x"]})
    check(st == 400, "a malformed flip refused")
    # the reference: the flipped map solved directly at the same frequencies
    st, prj, _, _ = srv.request("GET", "/api/project")
    p = prj["project"]
    rows = list(p["pixels"])
    for k in cells:
        i, j = k % nx, k // nx
        r = ny - 1 - j
        rows[r] = rows[r][:i] + ("." if rows[r][i] == "#" else "#") + rows[r][i + 1:]
    check(s1["map"] == "".join("1" if rows[ny - 1 - (k // nx)][k % nx] == "#" else "0" for k in range(nx * ny)),
          "the live map is the edited map")
    p["pixels"] = rows
    st, _, _, _ = srv.request("PUT", "/api/project", p, client="reference-tab")
    f = s1["freq_hz"]
    st, _, _, _ = srv.request("POST", "/api/sweep", {"start_hz": f[0], "stop_hz": f[-1], "points": len(f),
                                                     "exact": True}, client="reference-tab")
    srv.wait_job(client="reference-tab")
    st, ref, _, _ = srv.request("GET", "/api/sweep", client="reference-tab")
    err = max(abs(complex(a, b) - complex(c, d))
              for e in ("S11", "S21", "S22")
              for a, b, c, d in zip(s1["s"][e]["re"], s1["s"][e]["im"], ref["s"][e]["re"], ref["s"][e]["im"]))
    check(err < 1e-8, f"live S after the flip = a direct solve of the flipped map (max |dS| {err:.1e})")
    still_answers(srv, "live mode")


def test_design(srv):
    nx, ny = 35, 11
    region = "".join("1" if 13 <= i <= 21 else "0" for j in range(ny) for i in range(nx))
    spec = {"symmetry": "y", "unit": "GHz", "masks": [
        {"s": "S21", "type": "min", "start": 0.5, "stop": 2, "bound_db": -1},
        {"s": "S21", "type": "max", "start": 6, "stop": 9, "bound_db": -15}],
        "start": "metal", "frequencies": {"points": 8}, "passes": 1, "time_budget": 20, "seed": 1}
    bad = dict(spec, symmetry="diagonal")
    st, doc, _, _ = srv.request("POST", "/api/design", {"region": region, "spec": bad})
    job = srv.wait_job()
    check(job["state"] == "failed" and "symmetry" in job.get("message", ""),
          f"a bad spec field refused with the design module's message: {job.get('message')}")
    st, doc, _, _ = srv.request("POST", "/api/design", {"region": region, "spec": spec})
    check(st == 202, "POST /api/design starts DBS")
    job = srv.wait_job()
    st, d, _, _ = srv.request("GET", "/api/design")
    check(job["state"] == "done" and st == 200 and len(d["map"]) == nx * ny, "GET /api/design: the best map")
    check(d["report"]["cost"] <= d["report"]["start_cost"], "DBS's cost does not rise")
    check(job.get("map") == d["map"] and abs(job.get("cost", -1) - d["report"]["cost"]) < 1e-9,
          "the job's progress carries the search's current map and cost, the best at the end")
    still_answers(srv, "a design")


def test_memory_refusal(solvent):
    srv = Server(solvent, PIXEL2PORT, extra=["--memory-limit", "2M"], files=[PIXEL2PORT])
    try:
        st, doc, _, _ = srv.request("POST", "/api/memory", {})
        check(st == 200 and doc["fits"] is False and "memory" in doc.get("message", ""),
              f"a run over --memory-limit: the library's refusal ({doc})")
        st, doc, _, _ = srv.request("POST", "/api/sweep", {})
        job = srv.wait_job()
        check(job["state"] == "failed" and "memory-limit" in job.get("message", ""),
              f"the sweep refused by the library, naming the limit: {job.get('message')}")
        still_answers(srv, "a refused run")
    finally:
        srv.close()


def main():
    srv = Server(SOLVENT, PIXEL2PORT, files=[PIXEL2PORT, LINE, BOARD])
    try:
        test_page_and_refusals(srv)
        test_project(srv)
        test_sweep_matches_tool(srv)
        test_busy_and_cancel(srv)
        test_closed_tab(srv)
        test_live(srv)
        test_design(srv)
        still_answers(srv, "everything")
    finally:
        code = srv.close()
    err = srv.stderr_text()
    check(code == 0, f"the server stops cleanly on SIGTERM (exit {code})")
    check("Sanitizer" not in err and "runtime error" not in err, f"no sanitizer report {err[-2000:]}")
    test_memory_refusal(SOLVENT)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
