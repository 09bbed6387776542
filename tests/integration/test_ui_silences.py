#!/usr/bin/env python3
"""GET /api/gpumon/v1/silences lists the silences of a real Alertmanager.

Starts Alertmanager 0.25 behind basic auth (its --web.config.file), and
`gpumon server --simulate` behind basic auth too, configured with two
Alertmanager entries: the real one (with its credentials in the entry's
basic_auth) and a port where nothing listens. Through Alertmanager's own API
it creates a silence active now and one in two hours, then expects:
- without credentials, gpumon refuses the silences endpoint, the page at /
  and an asset under /assets/ (401), as it refuses the API;
- a range around now lists exactly the active silence, with the matchers,
  comment, creator and times Alertmanager holds, state "active";
- a range in two hours lists exactly the future one ("pending"); Unix
  seconds and RFC 3339 both work as bounds;
- the unreachable Alertmanager shows as a warning naming its URL, not an
  error;
- once the active silence is expired through Alertmanager's API, gpumon
  reports it "expired" within the cache period, still listed for the past.
"""

import base64
import datetime
import json
import os
import re
import tempfile
import time
import urllib.parse
import urllib.request

from harness import (Skip, check, free_port, http_get, need_tool, run_test, start_on_free_port,
                     wait_until)

USER, PASSWORD = "ops", "silence-pw"
AM_USER, AM_PASSWORD = "am-user", "am-pw"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def bcrypt(password):
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))
    except (ImportError, AttributeError, OSError):
        h = None
    if not h or not h.startswith("$2"):
        raise Skip("no bcrypt in this Python's crypt module")
    return h


def auth_header(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def am_request(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json",
                                          **auth_header(AM_USER, AM_PASSWORD)})
    with _OPENER.open(req, timeout=10) as r:
        text = r.read().decode()
        return json.loads(text) if text else None


def start(make_argv, name, ready_path):
    """Starts make_argv(port) on a free port behind basic auth: ready once it
    answers 401."""
    return start_on_free_port(make_argv, ready_path, name, expect_status=401)


def silences(base, query):
    r = http_get(base + "/api/gpumon/v1/silences?" + urllib.parse.urlencode(query),
                 headers=auth_header(USER, PASSWORD))
    check(r.status == 200, f"silences answered {r.status}: {r.body[:300]!r}")
    body = json.loads(r.text)
    check(body["status"] == "success", f"silences: {body}")
    return body


def body(args):
    alertmanager = need_tool("prometheus-alertmanager", ["/usr/bin/prometheus-alertmanager"])
    am = server = None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            am_web = os.path.join(tmp, "am-web.yml")
            with open(am_web, "w") as f:
                f.write(f"basic_auth_users:\n  {AM_USER}: '{bcrypt(AM_PASSWORD)}'\n")
            am_config = os.path.join(tmp, "alertmanager.yml")
            with open(am_config, "w") as f:
                f.write("route:\n  receiver: none\nreceivers:\n  - name: none\n")
            am, am_port = start(
                lambda p: [alertmanager, f"--config.file={am_config}",
                           f"--storage.path={os.path.join(tmp, 'am')}",
                           f"--web.listen-address=127.0.0.1:{p}", "--cluster.listen-address=",
                           f"--web.config.file={am_web}"], "alertmanager", "/-/ready")
            am_base = f"http://127.0.0.1:{am_port}"
            dead_port = free_port()

            now = time.time()
            matchers = [{"name": "gpu", "value": "3", "isRegex": False, "isEqual": True},
                        {"name": "alertname", "value": "Gpu.*", "isRegex": True,
                         "isEqual": True}]
            active_id = am_request(am_base, "POST", "/api/v2/silences", {
                "matchers": matchers, "startsAt": rfc3339(now - 60),
                "endsAt": rfc3339(now + 3600), "createdBy": "it-ops",
                "comment": "GPU 3 maintenance"})["silenceID"]
            future_id = am_request(am_base, "POST", "/api/v2/silences", {
                "matchers": [{"name": "hostname", "value": "node7", "isRegex": False,
                              "isEqual": False}],
                "startsAt": rfc3339(now + 7200), "endsAt": rfc3339(now + 10800),
                "createdBy": "it-ops", "comment": "later"})["silenceID"]
            held = {s["id"]: s for s in am_request(am_base, "GET", "/api/v2/silences")}
            check(set(held) == {active_id, future_id}, f"Alertmanager silences: {held}")

            web = os.path.join(tmp, "web.yml")
            with open(web, "w") as f:
                f.write(f"basic_auth_users:\n  {USER}: '{bcrypt(PASSWORD)}'\n")
            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 5s\n"
                        "alerting:\n  alertmanagers:\n"
                        "    - basic_auth:\n"
                        f"        username: {AM_USER}\n        password: {AM_PASSWORD}\n"
                        f"      static_configs:\n        - targets: ['127.0.0.1:{am_port}']\n"
                        "    - timeout: 1s\n"
                        f"      static_configs:\n        - targets: ['127.0.0.1:{dead_port}']\n"
                        "scrape_configs: []\n")
            server, port = start(
                lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data",
                           os.path.join(tmp, "data"), "--config", config, "--web.config.file",
                           web], "gpumon server", "/-/healthy")
            base = f"http://127.0.0.1:{port}"

            # Behind the same basic auth as the API.
            page = http_get(base + "/", headers=auth_header(USER, PASSWORD))
            check(page.status == 200, f"/ with credentials answered {page.status}")
            asset = re.search(r'src="(/assets/[^"]+)"', page.text)
            paths = ["/", "/fleet", "/api/gpumon/v1/silences", "/api/v1/query?query=up"]
            if asset:
                paths.append(asset.group(1))
            else:
                check("GPUMON_UI=OFF" in page.text, "/ is neither the UI nor the no-UI page")
                paths.append("/assets/app.js")
            for path in paths:
                for headers in ({}, auth_header(USER, "wrong")):
                    r = http_get(base + path, headers=headers)
                    check(r.status == 401, f"{path} with {headers or 'no credentials'} "
                                           f"answered {r.status}, not 401")

            got = silences(base, {"start": f"{now - 600:.3f}", "end": f"{now + 600:.3f}"})
            ids = [s["id"] for s in got["data"]]
            check(ids == [active_id], f"silences around now: {ids}, want [{active_id}]")
            s = got["data"][0]
            am_s = held[active_id]
            for key in ("startsAt", "endsAt", "comment", "createdBy"):
                check(s[key] == am_s[key], f"{key}: gpumon {s[key]!r}, Alertmanager {am_s[key]!r}")
            by_name = lambda ms: sorted(ms, key=lambda m: m["name"])  # noqa: E731
            check(by_name(s["matchers"]) == by_name(matchers),
                  f"matchers: {s['matchers']}, want {matchers}")
            check(s["status"] == {"state": "active"}, f"status: {s['status']}")
            dead_url = f"http://127.0.0.1:{dead_port}/api/v2/silences"
            warnings = got.get("warnings", [])
            check(len(warnings) == 1 and dead_url in warnings[0],
                  f"warnings {warnings} should name only {dead_url}")

            later = silences(base, {"start": rfc3339(now + 9000), "end": rfc3339(now + 9600)})
            check([x["id"] for x in later["data"]] == [future_id],
                  f"silences in 2.5 h: {later['data']}, want [{future_id}]")
            check(later["data"][0]["status"]["state"] == "pending", f"{later['data'][0]}")
            check(later["data"][0]["matchers"][0]["isEqual"] is False, f"{later['data'][0]}")

            everything = silences(base, {})
            check(sorted(x["id"] for x in everything["data"]) == sorted([active_id, future_id]),
                  f"unbounded: {everything['data']}")

            # Expired through Alertmanager: the cache (a few seconds) catches up.
            am_request(am_base, "DELETE", f"/api/v2/silence/{active_id}")
            expired = wait_until(
                lambda: [x for x in silences(base, {"start": f"{now - 600:.3f}",
                                                    "end": f"{time.time():.3f}"})["data"]
                         if x["id"] == active_id and x["status"]["state"] == "expired"],
                15, what="the expired silence reported as expired")
            check(len(expired) == 1, f"{expired}")
        finally:
            for proc in (server, am):
                if proc is not None:
                    proc.stop()


if __name__ == "__main__":
    run_test(body)
