#!/usr/bin/env python3
"""shots.py — every view of --html pages as people see them, in one headless
chromium driven over --remote-debugging-pipe (the DevTools protocol, as
bench/html.sh): for each window width, each page and each view it has, open
the view with its layout check (#VIEW&selftest=layout: lib_check.js), read the
page's status (render and check results, errors), and keep a screenshot of the
view (its first --max-height px) as OUT/PAGE-VIEW-WIDTH.png.  A standalone
--flamegraph SVG is opened too: it must show frames in its first screen.

  shots.py BROWSER OUT --width 1280 --width 1920 --page NAME=FILE.html ... --svg NAME=FILE.svg

Prints one line per view and width ("ok PAGE VIEW WIDTH detail" or "FAIL ...")
and exits 1 when any failed, 77 when the browser cannot start.
"""
import argparse, base64, json, os, subprocess, sys, tempfile, time


class Browser:
    def __init__(self, path, profile):
        r_cmd, self.w_cmd = os.pipe()
        self.r_ev, w_ev = os.pipe()

        def child():
            os.dup2(r_cmd, 3)
            os.dup2(w_ev, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.p = subprocess.Popen(
            [path, "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile,
             "--window-size=1280,1000", "--remote-debugging-pipe", "about:blank"],
            close_fds=False, preexec_fn=child, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(r_cmd)
        os.close(w_ev)
        self.buf, self.nid, self.events = b"", 0, []
        for _ in range(100):
            t = [x for x in self.call("Target.getTargets")["result"]["targetInfos"]
                 if x["type"] == "page"]
            if t:
                break
            time.sleep(0.1)
        self.sid = self.call("Target.attachToTarget", {"targetId": t[0]["targetId"],
                                                       "flatten": True})["result"]["sessionId"]
        self.call("Page.enable", sid=self.sid)
        self.call("Runtime.enable", sid=self.sid)

    def call(self, method, params=None, sid=None):
        self.nid += 1
        m = {"id": self.nid, "method": method, "params": params or {}}
        if sid:
            m["sessionId"] = sid
        os.write(self.w_cmd, json.dumps(m).encode() + b"\0")
        while True:
            while b"\0" in self.buf:
                msg, self.buf = self.buf.split(b"\0", 1)
                r = json.loads(msg)
                if r.get("id") == self.nid:
                    if "error" in r:
                        raise RuntimeError("%s: %s" % (method, r["error"]))
                    return r
                if r.get("method") == "Runtime.exceptionThrown":
                    self.events.append(r["params"]["exceptionDetails"].get("text", "exception"))
            c = os.read(self.r_ev, 1 << 20)
            if not c:
                raise RuntimeError("chromium closed the pipe")
            self.buf += c

    def page(self, method, params=None):
        return self.call(method, params, self.sid)

    def eval(self, expr):
        r = self.page("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        return r["result"]["result"].get("value")

    def close(self):
        self.p.kill()
        self.p.wait()


STATUS = ("(function(){var s=document.getElementById('cbn-status');return s?{state:"
          "s.getAttribute('data-state'),view:s.getAttribute('data-view'),errors:s.getAttribute("
          "'data-errors'),text:s.textContent}:null})()")


def wait_status(b, view, limit=30):
    end = time.time() + limit
    while time.time() < end:
        st = b.eval(STATUS)
        if st and st["state"] == "ready" and (st["view"] or "") == view and \
                ("selftest %s.layout" % view) in st["text"]:
            return st
        time.sleep(0.05)
    return b.eval(STATUS)


def shot(b, path, width, max_h):
    h = b.eval("Math.ceil(document.documentElement.scrollHeight)") or 800
    h = max(200, min(int(h), max_h))
    r = b.page("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                          "clip": {"x": 0, "y": 0, "width": width, "height": h,
                                                   "scale": 1}})
    with open(path, "wb") as f:
        f.write(base64.b64decode(r["result"]["data"]))
    return h


def shot_view(b, path):
    """the window as it opened (scrolled where the page scrolled itself)"""
    r = b.page("Page.captureScreenshot", {"format": "png"})
    with open(path, "wb") as f:
        f.write(base64.b64decode(r["result"]["data"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("browser")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, action="append", default=[])
    ap.add_argument("--page", action="append", default=[])
    ap.add_argument("--svg", action="append", default=[])
    ap.add_argument("--max-height", type=int, default=2400)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    prof = tempfile.mkdtemp(prefix="cbn-shots-")
    try:
        b = Browser(a.browser, prof)
    except Exception as e:  # noqa: BLE001 - any failure to start is a skip
        print("SKIP: chromium could not start: %s" % e)
        return 77
    failed = 0
    try:
        for width in a.width or [1280]:
            b.page("Emulation.setDeviceMetricsOverride", {"width": width, "height": 1000,
                                                          "deviceScaleFactor": 1, "mobile": False})
            for spec in a.page:
                name, path = spec.split("=", 1)
                b.page("Page.navigate", {"url": "file://" + os.path.abspath(path) + "#overview"})
                st = wait_status(b, "", 1)
                end = time.time() + 30
                while time.time() < end and not (st and st["state"] == "ready"):
                    time.sleep(0.05)
                    st = b.eval(STATUS)
                views = b.eval("CBN.views.filter(function(v){return !v.has||v.has(CBN.data)})"
                               ".map(function(v){return v.id})") or []
                for k, view in enumerate(views):
                    b.events.clear()
                    b.eval("location.hash='#%s&selftest=layout&w=%d&k=%d'" % (view, width, k))
                    st = wait_status(b, view)
                    text = (st or {}).get("text", "")
                    lines = [l for l in text.splitlines()
                             if l.startswith("error") or " FAIL " in l or "selftest" in l]
                    bad = [l for l in lines if l.startswith("error") or " FAIL " in l]
                    if not st or st["state"] != "ready" or st["errors"] != "0":
                        bad.append("page not ready or errors: %s" % (st and st["errors"]))
                    bad += ["uncaught: " + e for e in b.events]
                    png = os.path.join(a.out, "%s-%s-%d.png" % (name, view, width))
                    h = shot(b, png, width, a.max_height)
                    detail = [l for l in lines if "layout ok" in l]
                    if bad:
                        failed += 1
                        print("FAIL %s %s %d: %s" % (name, view, width, " | ".join(bad)))
                    else:
                        print("ok %s %s %d %s shot=%dpx" % (name, view, width,
                              detail[0].split(" ok ", 1)[1] if detail else "", h))
            for spec in a.svg:
                name, path = spec.split("=", 1)
                b.page("Page.navigate", {"url": "file://" + os.path.abspath(path)})
                time.sleep(0.5)
                # what opens: frames in the window, the root (the first
                # frame, full width) among them, and most of the window's
                # rows of frames not blank
                r = b.eval("(function(){var n=0,wide=0,all=document.querySelectorAll('g.f rect'),"
                           "rows={};for(var i=0;i<all.length;i++){var q=all[i].getBoundingClientRect();"
                           "if(q.bottom>0&&q.top<innerHeight&&q.width>0){n++;rows[Math.round(q.top)]=1;"
                           "if(q.width>50)wide++;}}var r=all.length?all[0].getBoundingClientRect():null;"
                           "return {frames:all.length,seen:n,wide:wide,rows:Object.keys(rows).length,"
                           "root:!!r&&r.top>=0&&r.bottom<=innerHeight,h:innerHeight}})()") or {}
                png = os.path.join(a.out, "%s-svg-%d.png" % (name, width))
                shot_view(b, png)
                if not r.get("seen") or not r.get("wide") or not r.get("root"):
                    failed += 1
                    print("FAIL %s svg %d: the graph is not in the first screen: %s" % (name, width, r))
                else:
                    print("ok %s svg %d frames=%d in_first_screen=%d rows=%d" %
                          (name, width, r["frames"], r["seen"], r["rows"]))
    finally:
        b.close()
        subprocess.run(["rm", "-rf", prof])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
