"""The dashboard over plain HTTP, as a browser asks for it.

Usage: dashboard_http_check.py KUBECONFIG

Checks that "/" is the dashboard's page for a browser and the list of
paths for an API client, that every module the page's import map names is
served, that a browser, which always offers brotli, gets a list gzipped
at most (brotli made big lists several times slower), and that requests
a web page elsewhere makes are refused. Exits 0
when all hold; prints the one that did not otherwise.
"""
import json
import re
import sys
import urllib.error
import urllib.request

import yaml


def fetch(url, headers):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as r:
        return r.status, r.headers, r.read()


def main():
    with open(sys.argv[1]) as f:
        base = yaml.safe_load(f)["clusters"][0]["cluster"]["server"]
    status, headers, body = fetch(base + "/", {"Accept": "text/html,application/xhtml+xml"})
    page = body.decode()
    if status != 200 or "text/html" not in headers["Content-Type"] or "importmap" not in page:
        print(f"/ for a browser: {status} {headers['Content-Type']} {page[:200]!r}")
        return 1
    if headers.get("X-Frame-Options") != "DENY":
        print(f"/ may be framed: X-Frame-Options {headers.get('X-Frame-Options')}")
        return 1
    imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', page, re.S)
                         .group(1))["imports"]
    for module in list(imports.values()) + ["/ui/app.js"]:
        status, headers, body = fetch(base + module, {})
        if status != 200 or "javascript" not in headers["Content-Type"] or not body:
            print(f"{module}: {status} {headers['Content-Type']}")
            return 1
    status, headers, body = fetch(base + "/", {"Accept": "application/json"})
    if "/api" not in json.loads(body)["paths"]:
        print(f"/ for a client: {body[:200]!r}")
        return 1
    status, headers, body = fetch(base + "/api/v1/namespaces",
                                  {"Accept-Encoding": "gzip, deflate, br"})
    if headers.get("Content-Encoding") == "br":
        print("a list was sent with brotli")
        return 1
    # What a web page elsewhere may make a browser send: refused, the
    # server being on loopback (a page whose name was rebound to
    # 127.0.0.1 is same-origin by its Origin, but not by its Host).
    port = base.rsplit(":", 1)[1]
    # A name that merely begins as loopback does is no loopback.
    rebound = "127.0.0.1.evil.example"
    for headers in ({"Origin": "http://evil.example"},
                    {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
                    {"Host": f"{rebound}:{port}", "Origin": f"http://{rebound}:{port}"}):
        try:
            fetch(base + "/api/v1/namespaces", headers)
            print(f"a request with {headers} was answered")
            return 1
        except urllib.error.HTTPError as e:
            if e.code != 403:
                print(f"a request with {headers}: {e.code}, not 403")
                return 1
    status, _, _ = fetch(base + "/api/v1/namespaces", {"Origin": base})
    if status != 200:
        print(f"a same-origin request: {status}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
