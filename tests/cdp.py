"""Headless Chromium driven over the DevTools protocol with only the Python
standard library: `chromium --remote-debugging-pipe` reads NUL-terminated
JSON commands on fd 3 and writes replies and events on fd 4, so no node, no
websocket library and no open port are needed (Debian's `chromium` is all).

    with Browser() as b:
        page = b.open_page()
        page.navigate("file:///tmp/x.html")
        page.evaluate("document.title")
        page.screenshot("shot.png")
        page.console_errors, page.requests
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, width=1280, height=900, timeout=60):
        self.width, self.height, self.timeout = width, height, timeout
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def __enter__(self):
        if not CHROMIUM:
            raise CDPError("chromium not found; fix: apt-get install chromium "
                           "(ci/install-packages.sh lists it)")
        self.profile = tempfile.mkdtemp(prefix="iowrap-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        args = [CHROMIUM, "--headless=new", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}",
                "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--disable-gpu",
                "--mute-audio", "--hide-scrollbars",
                # No network at all: every name fails, every proxy is closed.
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # the sandbox refuses root

        def fds():
            # Out of the way first: either end may already be fd 3 or 4.
            r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            args, preexec_fn=fds,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.profile, "stderr.log"), "wb"),
            close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        return self

    def __exit__(self, *exc):
        try:
            self.send("Browser.close")
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def stderr_tail(self):
        try:
            with open(os.path.join(self.profile, "stderr.log"), "rb") as f:
                return f.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise CDPError("chromium closed the pipe:\n" + self.stderr_tail())
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        """Sends a command and returns its result; events seen meanwhile
        are kept in self.events."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, session, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for k, ev in enumerate(self.events):
                if ev.get("method") == method and ev.get("sessionId") == session:
                    return self.events.pop(k)
            self.events.append(self._read_message(deadline))

    def open_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"})
        session = self.send("Target.attachToTarget",
                            {"targetId": target["targetId"], "flatten": True})
        return Page(self, session["sessionId"])


class Page:
    def __init__(self, browser, session):
        self.b, self.session = browser, session
        for method in ("Page.enable", "Runtime.enable", "Log.enable",
                       "Network.enable"):
            self.send(method)
        self.send("Network.emulateNetworkConditions",
                  {"offline": True, "latency": 0, "downloadThroughput": -1,
                   "uploadThroughput": -1})
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": browser.width, "height": browser.height,
                   "deviceScaleFactor": 1, "mobile": False})

    def send(self, method, params=None):
        return self.b.send(method, params, self.session)

    def navigate(self, url):
        self.send("Page.navigate", {"url": url})
        self.b.wait_event("Page.loadEventFired", self.session)

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression,
                                           "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CDPError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path):
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"],
                "height": min(size["height"], 16000), "scale": 1}
        data = self.send("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True,
                          "clip": clip})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def _mine(self):
        return [e for e in self.b.events if e.get("sessionId") == self.session]

    @property
    def console_errors(self):
        """Console errors, uncaught exceptions and browser log errors
        (a blocked fetch, a CSP violation) of this page so far."""
        out = []
        for e in self._mine():
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + str(d.get("exception", {}).get("description", d.get("text"))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    @property
    def requests(self):
        """URLs of every request the page made."""
        return [e["params"]["request"]["url"] for e in self._mine()
                if e.get("method") == "Network.requestWillBeSent"]
