"""The browser app in a real browser: Debian's Chromium, headless, driven by
Selenium. Loads the page on the dataset's board (examples/design/board.json),
draws a thru line and an open stub with the mouse, sweeps, checks the plot
has its traces and a triangle per exactly solved frequency, downloads the
Touchstone file and compares it with `solvent sweep` on the project the page
sent (<= 1e-12), turns on live mode, toggles a pixel and sees S change.
Screenshots go to OUT_DIR (docs/app.md shows them). Skipped (exit 77) where
Chromium, its driver or Selenium is absent.

usage: test_browser.py SOLVENT SOURCE_DIR OUT_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from serve_harness import Server, read_touchstone  # noqa: E402

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:
    print("SKIP: selenium is not installed in this Python (python/requirements.txt)")
    sys.exit(77)

SOLVENT, SRC, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not CHROMIUM or not DRIVER:
    print("SKIP: chromium and chromium-driver are not installed (scripts/setup installs them)")
    sys.exit(77)
BOARD = os.path.join(SRC, "examples", "design", "board.json")
NX, NY = 35, 11
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def wait(fn, timeout=120, what="a condition"):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def browser(download_dir):
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,950",
              "--force-device-scale-factor=1"]:
        o.add_argument(a)
    o.add_experimental_option("prefs", {"download.default_directory": download_dir,
                                        "download.prompt_for_download": False})
    return webdriver.Chrome(service=Service(DRIVER), options=o)


def drag_cells(d, cells):
    """Press on the first cell, move over each of the others, release."""
    first = d.find_element(By.ID, f"cell-{cells[0]}")
    chain = ActionChains(d).move_to_element(first).click_and_hold()
    for k in cells[1:]:
        chain = chain.move_to_element(d.find_element(By.ID, f"cell-{k}"))
    chain.release().perform()


def main():
    os.makedirs(OUT, exist_ok=True)
    down = tempfile.mkdtemp(prefix="serve-download-")
    srv = Server(SOLVENT, BOARD, files=[BOARD])
    d = browser(down)
    try:
        t0 = time.time()
        d.get(srv.url)
        wait(lambda: d.execute_script("return document.body.dataset.ready === '1'"), what="the page")
        ready = time.time() - t0
        nav = d.execute_script("const n = performance.getEntriesByType('navigation')[0]; return n ? n.duration : null")
        print(f"page ready in {ready:.3f} s (navigation {nav} ms)")
        check(len(d.find_elements(By.CSS_SELECTOR, "#editor rect.cell")) == NX * NY, "the editor shows the board")
        check(len(d.find_elements(By.CSS_SELECTOR, "#editor rect.fixed")) > 0, "port cells are shown fixed")
        # a thru line across the region (row 5) and an open stub up from its middle
        drag_cells(d, [i + NX * 5 for i in range(13, 22)])
        drag_cells(d, [17 + NX * j for j in range(6, 10)])
        metal = [int(e.get_attribute("data-k")) for e in d.find_elements(By.CSS_SELECTOR, "#editor rect.metal")]
        check(all(i + NX * 5 in metal for i in range(13, 22)) and 17 + NX * 9 in metal, "the drawing is metal")
        pts = d.find_element(By.ID, "points")
        pts.clear()
        pts.send_keys("41")
        t1 = time.time()
        d.find_element(By.ID, "sweep").click()
        wait(lambda: "done" in d.find_element(By.ID, "phase").text, what="the sweep")
        sweep_s = time.time() - t1
        traces = d.find_elements(By.CSS_SELECTOR, "#plot polyline.trace")
        check(len(traces) == 3, f"the plot has S11, S21, S22 ({len(traces)} traces)")
        client = d.execute_script("return document.body.dataset.client")
        _, res, _, _ = srv.request("GET", "/api/sweep", client=client)
        markers = d.find_elements(By.CSS_SELECTOR, "#plot polygon.exact-marker")
        check(len(markers) == res["report"]["exact_solves"] and len(markers) > 0,
              f"a triangle per exactly solved frequency ({len(markers)})")
        d.save_screenshot(os.path.join(OUT, "app-sweep.png"))
        # phase and the Smith chart from the same answer
        d.find_element(By.CSS_SELECTOR, "input[name=mode][value=deg]").click()
        check(len(d.find_elements(By.CSS_SELECTOR, "#plot polyline.trace")) == 3, "the phase plot has its traces")
        d.find_element(By.CSS_SELECTOR, "input[name=mode][value=smith]").click()
        smith = d.find_elements(By.CSS_SELECTOR, "#plot polyline.trace")
        check(len(smith) == 1 and len(smith[0].get_attribute("points").split()) == 41, "the Smith chart has S11's 41 points")
        d.find_element(By.CSS_SELECTOR, "input[name=mode][value=db]").click()
        # the Touchstone file through the browser's download
        d.find_element(By.ID, "dl-touchstone").click()
        path = wait(lambda: next((os.path.join(down, f) for f in os.listdir(down) if f.endswith(".s2p")), None),
                    what="the download")
        time.sleep(0.3)
        _, prj, _, _ = srv.request("GET", "/api/project", client=client)
        with tempfile.TemporaryDirectory() as tmp:
            pj = os.path.join(tmp, "drawn.json")
            with open(pj, "w") as f:
                json.dump(prj["project"], f)
            ref = os.path.join(tmp, "drawn.s2p")
            t2 = time.time()
            subprocess.run([SOLVENT, "sweep", pj, "-o", ref, "--points", "41", "--quiet"], check=True)
            tool_s = time.time() - t2
            f1, r1 = read_touchstone(open(path).read())
            f2, r2 = read_touchstone(open(ref).read())
            err = max(abs(a - b) for x, y in zip(r1, r2) for a, b in zip(x, y))
            check(f1 == f2 and len(f1) == 41 and err <= 1e-12,
                  f"the downloaded Touchstone = solvent sweep's (max diff {err:.1e})")
        print(f"sweep from the page {sweep_s:.2f} s (job {res['report']['seconds']:.2f} s); "
              f"solvent sweep {tool_s:.2f} s (process)")
        # live mode: toggle a pixel, S changes
        d.find_element(By.ID, "live").click()
        wait(lambda: "frequencies" in d.find_element(By.ID, "live-status").text, what="live mode")
        live = d.find_elements(By.CSS_SELECTOR, "#plot polyline.live")
        before = [e.get_attribute("points") for e in live]
        check(len(live) == 3, "live traces drawn")
        drag_cells(d, [17 + NX * 9])
        wait(lambda: "update" in d.find_element(By.ID, "live-status").text, what="the live update")
        after = [e.get_attribute("points") for e in d.find_elements(By.CSS_SELECTOR, "#plot polyline.live")]
        check(after != before, "toggling a pixel in live mode changes S")
        print("live:", d.find_element(By.ID, "live-status").text)
        d.save_screenshot(os.path.join(OUT, "app-live.png"))
        # the design tab: a short DBS from the drawn map against the page's two masks
        d.find_element(By.ID, "live").click()
        d.find_element(By.CSS_SELECTOR, "button[data-tab=design-tab]").click()
        for field, value in (("passes", "1"), ("budget", "20"), ("dpoints", "8")):
            e = d.find_element(By.ID, field)
            e.clear()
            e.send_keys(value)
        # the drawn stub is not symmetric: the spec's symmetry must allow it as the start
        Select(d.find_element(By.ID, "symmetry")).select_by_value("none")
        check(len(d.find_elements(By.CSS_SELECTOR, "#plot rect.mask")) == 2, "the masks are drawn on the plot")
        d.find_element(By.ID, "design-run").click()
        wait(lambda: not d.find_element(By.ID, "design-stop").is_enabled() and
             ("cost" in d.find_element(By.ID, "design-status").text or d.find_element(By.ID, "error").is_displayed()),
             timeout=300, what="the design")
        error = d.find_element(By.ID, "error")
        check(not error.is_displayed(), f"the design ran ({error.text})")
        status = d.find_element(By.ID, "design-status").text
        print("design:", status)
        _, des, _, _ = srv.request("GET", "/api/design", client=client)
        check("map" in des, f"GET /api/design: the best map ({des.get('error')})")
        shown = des.get("map") and "".join("1" if "metal" in d.find_element(By.ID, f"cell-{k}").get_attribute("class") else "0"
                        for k in range(NX * NY))
        check(des["map"] == shown, "the editor shows the design's best map")
        d.save_screenshot(os.path.join(OUT, "app-design.png"))
        # mirror mode: a click flips the pixel and its image top <-> bottom
        Select(d.find_element(By.ID, "mirror")).select_by_value("y")
        pair = [d.find_element(By.ID, f"cell-{15 + NX * j}") for j in (0, NY - 1)]
        before = ["metal" in e.get_attribute("class") for e in pair]
        drag_cells(d, [15 + NX * 0])
        after = ["metal" in e.get_attribute("class") for e in pair]
        check(before == [False, False] and after == [True, True], f"mirror mode flips both images ({before} {after})")
        logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"] if hasattr(d, "get_log") else []
        check(not logs, f"no errors in the page's console {logs}")
    finally:
        d.quit()
        srv.close()
        shutil.rmtree(down, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
