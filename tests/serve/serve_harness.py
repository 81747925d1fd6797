"""Start `solvent serve` for a test and talk to it with a plain HTTP client.

Used by test_api.py and test_browser.py: the server runs on a free port
(--port 0) in a temporary served folder, and every request names the
server's own Host unless a test says otherwise."""
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import time


class Server:
    def __init__(self, solvent, project=None, extra=(), files=()):
        self.dir = tempfile.mkdtemp(prefix="serve-test-")
        for f in files:
            shutil.copy(f, self.dir)
        args = [solvent, "serve"]
        if project:
            args.append(os.path.join(self.dir, os.path.basename(project)))
        args += ["--port", "0", "--dir", self.dir, *extra]
        # stderr to a file: a pipe nobody reads would block the server once full
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://([^/]+)/", line)
        if not m:
            self.proc.wait(10)
            err = self.stderr_text()
            raise RuntimeError(f"solvent serve did not print its address: {line!r} {err!r}")
        self.host = m.group(1)
        self.port = int(self.host.rsplit(":", 1)[1])
        self.url = f"http://{self.host}/"

    def request(self, method, path, body=None, headers=None, client="test-client-1", host=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Host": host or self.host}
        if client:
            h["X-Solvent-Client"] = client
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            c.putheader(k, v)
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            c.putheader("Content-Length", str(len(data)))
        c.endheaders(data)
        r = c.getresponse()
        raw = r.read()
        c.close()
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        return r.status, doc, raw, dict(r.getheaders())

    def wait_job(self, client="test-client-1", timeout=300):
        t0 = time.time()
        while time.time() - t0 < timeout:
            st, doc, _, _ = self.request("GET", "/api/job", client=client)
            assert st == 200, doc
            if doc["state"] != "running":
                return doc
            time.sleep(0.1)
        raise AssertionError("job did not end")

    def alive(self):
        st, doc, _, _ = self.request("GET", "/api/job", client="alive-check")
        return st == 200 and doc["state"] in ("idle", "done", "failed", "cancelled", "running")

    def stderr_text(self):
        self.err.seek(0)
        return self.err.read()

    def close(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = -9
        shutil.rmtree(self.dir, ignore_errors=True)
        return code


def read_touchstone(text):
    """(freqs in Hz, rows of floats) of a Touchstone file's data lines."""
    unit = 1e9
    freqs, rows = [], []
    for line in text.splitlines():
        line = line.split("!", 1)[0].strip()
        if not line:
            continue
        if line.startswith("#"):
            u = line.split()[1].lower()
            unit = {"hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}[u]
            continue
        if line.startswith("["):
            continue
        v = [float(x) for x in line.split()]
        freqs.append(v[0] * unit)
        rows.append(v[1:])
    return freqs, rows
