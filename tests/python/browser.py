"""Headless Chromium driven over the DevTools protocol, with the Python standard library alone.

Chromium reads the protocol's messages on file descriptor 3 and writes its answers on 4
(--remote-debugging-pipe), each a JSON text ended by a NUL byte.  WebGL runs on SwiftShader, the software
renderer Chromium ships (--use-angle=swiftshader --enable-unsafe-swiftshader): no GPU is needed.
"""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def chromium() -> str:
    """The chromium program, or "" when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or ""


class Browser:
    """One headless Chromium with one page; ``events`` collects the protocol's events (Network.*, ...)."""

    def __init__(self, width: int, height: int, exe: str = ""):
        self.profile = tempfile.TemporaryDirectory(prefix="chromium-profile-")
        to_child, self._to = os.pipe()
        self._from, from_child = os.pipe()

        def descriptors():
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        args = [exe or chromium(), "--headless", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
                "--force-device-scale-factor=1", f"--window-size={width},{height}",
                f"--user-data-dir={self.profile.name}", "about:blank"]
        self.proc = subprocess.Popen(args, pass_fds=(to_child, from_child, 3, 4), preexec_fn=descriptors,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._id, self._buffer, self.events = 0, b"", []
        page = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.page("Page.enable")
        self.page("Network.enable")

    def _receive(self, timeout):
        end = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._from], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed its end of the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=None, timeout=60, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to, json.dumps(message).encode() + b"\0")
        while True:
            m = self._receive(timeout)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def page(self, method, **params):
        return self.call(method, session=self.session, **params)

    def evaluate(self, expression):
        r = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression[:80]}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, url, ready="document.body && document.body.dataset.ready === '1'", timeout=60):
        """Load ``url`` and wait until ``ready`` is true in it."""
        self.events.clear()
        self.page("Page.navigate", url=url)
        end = time.monotonic() + timeout
        while not self.evaluate(f"document.URL === {json.dumps(url)} && !!({ready})"):
            if time.monotonic() > end:
                raise TimeoutError(f"{url} did not get ready in {timeout} s")
            time.sleep(0.05)

    def requests(self) -> list:
        """The URLs the page asked for since it was opened."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.page("Page.captureScreenshot", format="png")["data"]))
        return path

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # it may be gone already
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to)
        os.close(self._from)
        self.profile.cleanup()
