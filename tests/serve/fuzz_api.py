"""A short fuzz of `solvent serve`'s API: random methods, paths, headers and
bodies (malformed JSON, wrong types, huge numbers, random bytes) against
every endpoint. The server must answer each with a status (never a dropped
connection), keep answering, and stop cleanly; under the sanitizer build
(SOLVENT_SANITIZE) its stderr must hold no sanitizer report, leaks
included (LeakSanitizer runs when the server exits).

usage: fuzz_api.py SOLVENT SOURCE_DIR [REQUESTS]"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
from serve_harness import Server  # noqa: E402

SOLVENT, SRC = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 1500
BOARD = os.path.join(SRC, "examples", "design", "board.json")
PATHS = ["/api/project", "/api/files", "/api/open", "/api/file", "/api/memory", "/api/gds", "/api/sweep",
         "/api/sweep/touchstone", "/api/job", "/api/live", "/api/live/flip", "/api/design", "/", "/app.js",
         "/api/", "/api/project/x", "/%00", "/..", "/api/open?name=%2e%2e%2fx", "/api/file?name=a%00b.json"]
METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"]
VALUES = [None, True, 0, -1, 1e308, -1e308, 2 ** 63, 0.5, "", "x" * 300, [], {}, [1, "a"], {"a": None}, "S21",
          "0" * 385, "1" * 385, 13, [13], [0, 13, 1000000]]
KEYS = ["start_hz", "stop_hz", "points", "tolerance", "exact", "region", "cells", "spec", "masks", "symmetry",
        "substrate", "grid", "pixels", "ports", "units", "metal"]


def random_body(rng, project):
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
    if kind == 2:
        return json.dumps({rng.choice(KEYS): rng.choice(VALUES) for _ in range(rng.randrange(4))})
    if kind == 3:  # the project with one field broken
        p = json.loads(json.dumps(project))
        key = rng.choice(list(p.keys()))
        p[key] = rng.choice(VALUES)
        return json.dumps(p)
    if kind == 4:  # the design spec with random fields
        spec = {rng.choice(["symmetry", "masks", "passes", "time_budget", "frequencies", "start", "unit"]):
                rng.choice(VALUES) for _ in range(3)}
        return json.dumps({"region": rng.choice(VALUES), "spec": spec})
    text = json.dumps(project)
    cut = rng.randrange(len(text))
    return text[:cut]


def main():
    rng = random.Random(38)
    srv = Server(SOLVENT, BOARD, files=[BOARD])
    failures = 0
    try:
        _, doc, _, _ = srv.request("GET", "/api/project")
        project = doc["project"]
        for k in range(N):
            method, path = rng.choice(METHODS), rng.choice(PATHS)
            client = rng.choice(["fuzz-tab-0001", "fuzz-tab-0002", None, "x", "fuzz-tab-" + "9" * 70])
            headers = {}
            if rng.random() < 0.1:
                headers["Origin"] = rng.choice(["http://evil", "null", f"http://{srv.host}", ""])
            try:
                st, _, _, _ = srv.request(method, path, random_body(rng, project), headers=headers, client=client,
                                          timeout=60)
            except Exception as e:  # a dropped connection is a failure
                print(f"FAIL request {k}: {method} {path}: {e}")
                failures += 1
                continue
            if not (200 <= st < 600) or st >= 500 and st != 503:
                print(f"FAIL request {k}: {method} {path}: status {st}")
                failures += 1
            if rng.random() < 0.05:
                srv.request("DELETE", "/api/job", client="fuzz-tab-0001")
        for c in ("fuzz-tab-0001", "fuzz-tab-0002"):
            srv.request("DELETE", "/api/job", client=c)
            srv.wait_job(client=c)
        if not srv.alive():
            print("FAIL the server no longer answers")
            failures += 1
    finally:
        code = srv.close()
    err = srv.stderr_text()
    if code != 0 or "Sanitizer" in err or "runtime error" in err:
        print(f"FAIL the server's exit {code}; stderr:\n{err[-4000:]}")
        failures += 1
    print(f"{N} requests, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
