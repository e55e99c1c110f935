#!/usr/bin/python3
"""The dashboard's figures (docs/benchmarks.md, "Dashboard"), in Debian's
headless Chromium driven by Selenium, against a real `trainyard server`:

  1. first meaningful paint of the jobs page with --jobs jobs in the store:
     from navigation start to the first rows of jobs in the page;
  2. from a job's state change (a resume, made through the API) to the
     page showing it, the jobs page watching;
  3. the log view following a replica that writes 10,000 lines a second:
     how far behind the replica the last line shown is, sampled while it
     writes.

  /usr/bin/python3 bench/dashboard_bench.py --trainyard build-release/src/cli/trainyard
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def start_server(trainyard, home):
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    env.pop("TRAINYARD_UI_DIR", None)
    log = open(os.path.join(home, "server.log"), "w+")
    server = subprocess.Popen([trainyard, "server", "--home", home, "--port", "0", "--root", "host"],
                              stdout=log, stderr=log, env=env, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        log.seek(0)
        m = re.search(r"serving the API on (http://[0-9.:]+)", log.read())
        if m:
            return server, m.group(1)
        if server.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError("the server did not start: " + open(log.name).read())


class Api:
    """One keep-alive connection: the store is filled quickly."""

    def __init__(self, url):
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port))

    def call(self, method, path, body=None, content_type="application/json"):
        data = json.dumps(body) if body is not None else None
        self.conn.request(method, path, body=data, headers={"Content-Type": content_type})
        response = self.conn.getresponse()
        text = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {text[:300]}")
        return json.loads(text) if text else None


JOBS = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs"


def job(name, command, suspend):
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"suspend": suspend}, "pytorchReplicaSpecs": {"Master": {
                "replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [
                    {"name": "pytorch", "image": "none", "command": command}]}}}}}}


def browser(artifacts):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--window-size=1400,1000",
                 "--user-data-dir=" + tempfile.mkdtemp(dir=artifacts)]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def first_paint(driver, url, runs, newest):
    """Per load, milliseconds from navigation start to the first job rows
    (the list's first pages), and to the whole list shown (the newest job,
    `newest`, at the top: rows are newest first)."""
    first, whole = [], []
    top = "[data-testid=job-row]"
    for _ in range(runs):
        driver.get("about:blank")
        driver.get(url + "/#/jobs")
        WebDriverWait(driver, 120, poll_frequency=0.005).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, top))
        first.append(driver.execute_script("return performance.now()"))
        WebDriverWait(driver, 120, poll_frequency=0.005).until(
            lambda d: d.execute_script(
                f"const r = document.querySelector('{top}'); return r && r.dataset.name") == newest)
        whole.append(driver.execute_script("return performance.now()"))
    return first, whole


def state_change(driver, api, url, names):
    """Milliseconds from each resume's answer to the row showing the new state."""
    driver.get(url + "/#/jobs")
    WebDriverWait(driver, 120).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=job-row]"))
    lags = []
    for name in names:
        row = f"[data-testid=job-row][data-name='{name}']"
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
        before = driver.find_element(By.CSS_SELECTOR, row).get_attribute("data-state")
        # The page notes when the row's state changes, by its own clock.
        driver.execute_script("""
          const [selector, before] = arguments;
          window.__changed = null;
          const check = () => {
            const row = document.querySelector(selector);
            if (row && row.dataset.state !== before && window.__changed === null) {
              window.__changed = Date.now();
            }
          };
          new MutationObserver(check).observe(document.body,
              {subtree: true, childList: true, attributes: true});""", row, before)
        sent = time.time() * 1000
        api.call("PATCH", f"{JOBS}/{name}", {"spec": {"runPolicy": {"suspend": False}}},
                 "application/merge-patch+json")
        WebDriverWait(driver, 60, poll_frequency=0.01).until(
            lambda d: d.execute_script("return window.__changed") is not None,
            f"{name}: the page still shows {driver.find_element(By.CSS_SELECTOR, row).get_attribute('data-state')}")
        lags.append(driver.execute_script("return window.__changed") - sent)
    return lags


WRITER = """
import sys, time
start = time.time()
n = 0
while time.time() - start < {seconds}:
    # A burst each millisecond: 10 lines, 10,000 a second.
    target = int((time.time() - start) * 10000)
    while n < target:
        sys.stdout.write(f"line {{n}} at {{time.time():.6f}}\\n")
        n += 1
    sys.stdout.flush()
    time.sleep(0.001)
print("wrote", n, "lines", flush=True)
"""


def log_follow(driver, api, url, seconds):
    """How far behind the replica the log view's last line is, in ms, sampled."""
    api.call("POST", JOBS, job("chatty", ["/usr/bin/python3", "-c",
                                          WRITER.format(seconds=seconds)], False))
    driver.get(url + "/#/jobs/PyTorchJob/default/chatty")
    WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=tab-logs]"))
    driver.find_element(By.CSS_SELECTOR, "[data-testid=tab-logs]").click()
    text = "[data-testid=log-text]"
    WebDriverWait(driver, 120, poll_frequency=0.02).until(
        lambda d: "line " in d.execute_script(
            f"const e = document.querySelector('{text}'); return e ? e.textContent : ''"))
    lags = []
    end = time.time() + seconds
    while time.time() < end:
        last = driver.execute_script(f"""
          const t = document.querySelector('{text}').textContent.trimEnd();
          return [t.slice(t.lastIndexOf('\\n') + 1), Date.now()];""")
        m = re.search(r"at ([0-9.]+)$", last[0])
        if m:
            lags.append(last[1] - float(m.group(1)) * 1000)
        time.sleep(0.25)
    WebDriverWait(driver, 120).until(lambda d: "wrote" in d.execute_script(
        f"return document.querySelector('{text}').textContent"))
    return lags


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainyard", required=True)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--log-seconds", type=int, default=10)
    parser.add_argument("--artifacts", default=tempfile.mkdtemp(prefix="dashboard-bench-"))
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="dashboard-bench-home-")
    server, url = start_server(os.path.abspath(args.trainyard), home)
    driver = None
    try:
        api = Api(url)
        start = time.time()
        for i in range(args.jobs):
            api.call("POST", JOBS, job(f"job-{i:05d}", ["true"], True))
        print(f"stored {args.jobs} suspended jobs in {time.time() - start:.1f} s")
        driver = browser(args.artifacts)
        paints, wholes = first_paint(driver, url, args.loads, f"job-{args.jobs - 1:05d}")
        print(f"jobs page, first rows with {args.jobs} jobs: median {statistics.median(paints):.0f} ms "
              f"(each: {', '.join(f'{t:.0f}' for t in paints)})")
        print(f"jobs page, all {args.jobs} jobs listed: median {statistics.median(wholes):.0f} ms "
              f"(each: {', '.join(f'{t:.0f}' for t in wholes)})")
        driver.save_screenshot(os.path.join(args.artifacts, f"jobs-{args.jobs}.png"))
        rows = driver.find_elements(By.CSS_SELECTOR, "[data-testid=job-row]")
        names = [r.get_attribute("data-name") for r in rows[:5]]
        lags = state_change(driver, api, url, names)
        print(f"state change to page: median {statistics.median(lags):.0f} ms, "
              f"max {max(lags):.0f} ms over {len(lags)}")
        lags = log_follow(driver, api, url, args.log_seconds)
        print(f"log view at 10,000 lines/s: last line shown behind the replica by median "
              f"{statistics.median(lags):.0f} ms, max {max(lags):.0f} ms over {len(lags)} samples")
        driver.save_screenshot(os.path.join(args.artifacts, "log-follow.png"))
    finally:
        if driver:
            driver.quit()
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(home, ignore_errors=True)
    print("screenshots:", args.artifacts)


if __name__ == "__main__":
    main()
