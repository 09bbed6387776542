#!/usr/bin/env python3
"""The real gpumon binary serves the built-in web UI it was built with.

Starts `gpumon server --simulate` and compares what it serves with the
bundle the build wrote (<build>/ui/dist, the build tree being the parent of
the binary's bin/):
- every page path answers index.html byte for byte, text/html, no-cache,
  with the strict Content-Security-Policy and the other security headers;
- index.html loads a module script from /assets/, and every file it names
  under /assets/ is served with the bytes of the dist file, an immutable
  Cache-Control and an ETag that revalidates to 304; with Accept-Encoding
  gzip the .gz variant is sent and inflates to the same bytes;
- /graph redirects to /explore; an unknown asset is a 404.
A binary built with GPUMON_UI=OFF (no dist folder) must answer / with the
page that says how to build the UI instead.
"""

import gzip
import os
import re
import tempfile

from harness import check, http_get, run_test, start_on_free_port

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'")
PAGES = ["/", "/fleet", "/gpu", "/training", "/alerts", "/explore", "/targets", "/rules", "/status"]


def check_security_headers(r, what):
    check(r.header("Content-Security-Policy") == CSP,
          f"{what}: Content-Security-Policy {r.header('Content-Security-Policy')!r}")
    check(r.header("X-Content-Type-Options") == "nosniff", f"{what}: X-Content-Type-Options")
    check(r.header("X-Frame-Options") == "DENY", f"{what}: X-Frame-Options")
    check(r.header("Referrer-Policy") == "same-origin", f"{what}: Referrer-Policy")


def body(args):
    dist = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.gpumon))), "ui",
                        "dist")
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_on_free_port(
            lambda p: [args.gpumon, "server", "--simulate", "h200x2", "--listen",
                       f"127.0.0.1:{p}", "--data", os.path.join(tmp, "data")],
            "/-/healthy", "gpumon server")
        try:
            base = f"http://127.0.0.1:{port}"
            if not os.path.exists(os.path.join(dist, "index.html")):
                r = http_get(base + "/")
                check(r.status == 200 and "GPUMON_UI=OFF" in r.text,
                      f"without {dist}, / should explain how to build the UI: {r.body[:300]!r}")
                check_security_headers(r, "/ (no UI)")
                return
            with open(os.path.join(dist, "index.html"), "rb") as f:
                index = f.read()
            for page in PAGES:
                r = http_get(base + page + "?from=now-1h")
                check(r.status == 200, f"{page} answered {r.status}")
                check(r.body == index, f"{page} is not {dist}/index.html")
                check(r.header("Content-Type") == "text/html; charset=utf-8",
                      f"{page}: Content-Type {r.header('Content-Type')}")
                check(r.header("Cache-Control") == "no-cache", f"{page}: Cache-Control")
                check_security_headers(r, page)

            html = index.decode()
            scripts = re.findall(r'<script[^>]*\ssrc="(/assets/[^"]+)"', html)
            check(scripts, f"index.html loads no script from /assets/:\n{html}")
            named = sorted(set(re.findall(r'(?:src|href)="(/assets/[^"]+)"', html)))
            for path in named:
                with open(os.path.join(dist, path.lstrip("/")), "rb") as f:
                    want = f.read()
                r = http_get(base + path)
                check(r.status == 200, f"{path} answered {r.status}")
                check(r.body == want, f"{path}: {len(r.body)} bytes served, the dist file has "
                                      f"{len(want)} (or they differ)")
                check(r.header("Content-Encoding") is None, f"{path}: unasked Content-Encoding")
                check(r.header("Cache-Control") == "public, max-age=31536000, immutable",
                      f"{path}: Cache-Control {r.header('Cache-Control')!r}")
                check_security_headers(r, path)
                etag = r.header("ETag")
                check(etag and etag.startswith('"'), f"{path}: ETag {etag!r}")
                again = http_get(base + path, headers={"If-None-Match": etag})
                check(again.status == 304 and again.body == b"",
                      f"{path} with If-None-Match answered {again.status}")
                if os.path.exists(os.path.join(dist, path.lstrip("/") + ".gz")):
                    z = http_get(base + path, headers={"Accept-Encoding": "gzip"})
                    check(z.header("Content-Encoding") == "gzip", f"{path}: no gzip variant sent")
                    check(gzip.decompress(z.body) == want, f"{path}: gzip variant differs")
                    check(z.header("Vary") == "Accept-Encoding", f"{path}: Vary")
            r = http_get(base + "/graph?g0.expr=up&g0.tab=1")
            check(r.status == 200 and r.body == index,  # urllib follows the redirect
                  f"/graph did not end at the UI: {r.status}")
            missing = http_get(base + "/assets/no-such-FILE1234.js")
            check(missing.status == 404, f"unknown asset answered {missing.status}")
        finally:
            server.stop()


if __name__ == "__main__":
    run_test(body)
