#!/usr/bin/python3
"""The dashboard, end to end, in headless Chromium.

Starts its own `trainyard server` (a fresh --home, --port 0), submits real
work through the API (the digits PyTorchJob from examples/, a small Katib
Experiment, a long-running batch Job, a bad manifest) and checks each page
with Selenium, polling with deadlines:

  /usr/bin/python3 tests/browser/dashboard_test.py --trainyard build/trainyard \
      --source . --artifacts /tmp/dashboard-artifacts [--ui-dir web]

--ui-dir sets TRAINYARD_UI_DIR (serve web/ from disk, for development);
without it the test checks the files embedded in the binary. Screenshots of
each page go to --artifacts. Skipped when Chromium, chromedriver or
Selenium is missing, unless TRAINYARD_REQUIRE_DEPS=1.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

ARGS = None
INSECURE = __import__("ssl")._create_unverified_context()  # the test's own self-signed server

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    HAVE_SELENIUM = True
except ImportError:  # pragma: no cover
    HAVE_SELENIUM = False

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def missing_deps():
    missing = []
    if not HAVE_SELENIUM:
        missing.append("selenium (python3-selenium)")
    if not os.access(CHROMIUM, os.X_OK):
        missing.append("chromium")
    if not os.access(CHROMEDRIVER, os.X_OK):
        missing.append("chromedriver")
    return missing


# A small Katib Experiment: three random trials of a script that prints an
# accuracy per epoch, rising with lr, so every trial has a curve and a value.
EXPERIMENT = """
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: ui-tune
spec:
  objective:
    type: maximize
    objectiveMetricName: accuracy
    additionalMetricNames: [loss]
  algorithm:
    algorithmName: random
    algorithmSettings:
      - {name: random_state, value: "3"}
  parallelTrialCount: 3
  maxTrialCount: 3
  maxFailedTrialCount: 1
  parameters:
    - name: lr
      parameterType: double
      feasibleSpace: {min: "0.01", max: "0.5"}
    - name: layers
      parameterType: int
      feasibleSpace: {min: "1", max: "4"}
    - name: optimizer
      parameterType: categorical
      feasibleSpace: {list: [sgd, adam]}
  trialTemplate:
    primaryContainerName: training
    trialParameters:
      - {name: lr, reference: lr}
      - {name: layers, reference: layers}
      - {name: optimizer, reference: optimizer}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: training
                image: python:3.11
                command:
                  - python3
                  - -c
                  - |
                    import sys, time
                    lr = float(sys.argv[1]); layers = int(sys.argv[2])
                    for epoch in range(1, 6):
                        acc = 1 - 0.5 / (1 + epoch * lr * layers)
                        print(f"epoch={epoch} accuracy={acc:.4f} loss={1 - acc:.4f}", flush=True)
                        time.sleep(0.2)
                  - ${trialParameters.lr}
                  - ${trialParameters.layers}
                  - ${trialParameters.optimizer}
"""

# Trainer's OptimizationJob with two objectives: each trial (a TrainJob)
# prints its epochs of a total (its progress) and its two metrics, which
# trainyard reads from its output.
RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: ui-torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers: [{name: node, image: pytorch/pytorch:2.1.0-cpu}]
"""

OPTIMIZATION = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: ui-pareto}
spec:
  objectives:
    - {metric: accuracy, direction: Maximize}
    - {metric: cost}
  numTrials: 5
  parallelTrials: 5
  searchAlgorithm: {random: {seed: 5}}
  parameters:
    - {name: x, searchSpace: {uniform: {min: "0", max: "1"}}}
  trainJobTemplate:
    spec:
      runtimeRef: {name: ui-torch}
      trainer:
        command:
          - python3
          - -c
          - |
            import os, time
            x = float(os.environ["KUBEFLOW_TRAINER_OPT_X"])
            for epoch in range(1, 4):
                print(f"Epoch {epoch}/3", flush=True)
                time.sleep(0.8)
            print(f"accuracy={1 - (x - 0.7) ** 2:.4f} cost={x:.4f}", flush=True)
"""

# A PyTorchJob with a misspelled field and invalid values: the submit page
# must show the errors at their fields and create nothing.
BAD_MANIFEST = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ui-bad-job
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Sometimes
      template:
        spec:
          containerz:
            - name: pytorch
              image: pytorch/pytorch:2.1.0-cpu
"""

# A batch Job that runs until suspended or deleted.
SLEEPER = """apiVersion: batch/v1
kind: Job
metadata:
  name: ui-sleeper
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: python:3.11
          command: [python3, -c, "import time\\nprint('sleeper started', flush=True)\\ntime.sleep(600)"]
"""


class Server:
    """`trainyard server` in its own process group, with a fresh home."""

    def __init__(self, binary, source, ui_dir, extra_args=()):
        self.home = tempfile.mkdtemp(prefix="ty-ui-test-")
        # Replicas may run as another user (root's server runs them as nobody).
        os.chmod(self.home, 0o755)
        env = dict(os.environ)
        env["PATH"] = "/usr/bin:" + env.get("PATH", "")
        env.pop("TRAINYARD_UI_DIR", None)
        if ui_dir:
            env["TRAINYARD_UI_DIR"] = os.path.abspath(ui_dir)
        self.stdout = open(os.path.join(self.home, "server.out"), "w+")
        self.stderr = open(os.path.join(self.home, "server.err"), "w+")
        self.proc = subprocess.Popen(
            [os.path.abspath(binary), "server", "--home", os.path.join(self.home, "h"), "--port", "0",
             # The jobs' replicas run this machine's programs.
             "--root", "host", *extra_args],
            cwd=source, env=env, stdout=self.stdout, stderr=self.stderr, stdin=subprocess.DEVNULL,
            start_new_session=True)
        self.url = None
        deadline = time.time() + 30
        while time.time() < deadline and self.url is None:
            if self.proc.poll() is not None:
                out = self.output()
                self.stop()
                raise RuntimeError("trainyard server exited: " + out)
            m = re.search(r"serving the API on (https?://[0-9.:a-z\[\]]+)", self.output())
            if m:
                self.url = m.group(1).rstrip("/")
                break
            time.sleep(0.05)
        if self.url is None:
            self.stop()
            raise RuntimeError("trainyard server printed no URL: " + self.output())

    def output(self):
        parts = []
        for f in (self.stderr, self.stdout):
            with open(f.name) as r:
                parts.append(r.read())
        return "\n".join(parts)

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        # Whatever it started in its group, and anything still naming its home.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in leftover_processes(self.home):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not self.stdout.closed:
            self.stdout.close()
            self.stderr.close()

    # The API, as a test client sees it.
    def request(self, method, path, body=None, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=30, context=INSECURE) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def get(self, path):
        return self.request("GET", path)

    def create_yaml(self, path, text):
        status, body = self.request("POST", path, text, "application/yaml")
        if status >= 300:
            raise AssertionError(f"creating at {path}: {status} {body}")
        return body


def leftover_processes(marker):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def start_browser(artifacts):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(a)
    profile = tempfile.mkdtemp(prefix="ty-ui-chrome-")
    opts.add_argument("--user-data-dir=" + profile)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    opts.set_capability("acceptInsecureCerts", True)  # the token test's self-signed server
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    return driver, profile


MLFLOW_JOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ui-mlflow
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [/usr/bin/python3, tests/python/mlflow_client_calls.py, mlflow_loss,
                        "10:0.9", "20:0.5", "30:0.2", "40:0.1"]
"""



class DashboardTest(unittest.TestCase):
    server = None
    driver = None

    @classmethod
    def setUpClass(cls):
        missing = missing_deps()
        if missing:
            message = "the dashboard's browser test needs " + ", ".join(missing)
            if os.environ.get("TRAINYARD_REQUIRE_DEPS") == "1":
                raise RuntimeError(message)
            raise unittest.SkipTest(message)
        os.makedirs(ARGS.artifacts, exist_ok=True)
        cls.started = time.time()
        cls.server = Server(ARGS.trainyard, ARGS.source, ARGS.ui_dir)
        try:
            cls.driver, cls.profile = start_browser(ARGS.artifacts)
        except Exception:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        # The server goes whatever the browser does: a chromedriver that hangs
        # on quit must not leave it running.
        try:
            cls.quit_browser()
        finally:
            cls.stop_server()

    @classmethod
    def quit_browser(cls):
        if cls.driver is not None:
            try:
                with open(os.path.join(ARGS.artifacts, "browser-console.log"), "w") as f:
                    for e in cls.driver.get_log("browser"):
                        f.write(f"{e['level']} {e['message']}\n")
            except Exception:
                pass
            try:
                cls.driver.quit()
            finally:
                shutil.rmtree(cls.profile, ignore_errors=True)

    @classmethod
    def stop_server(cls):
        if cls.server is not None:
            cls.server.stop()
            with open(os.path.join(ARGS.artifacts, "server.log"), "w") as f:
                f.write(cls.server.output())
            shutil.rmtree(cls.server.home, ignore_errors=True)
            left = leftover_processes(cls.server.home)
            if left:
                raise RuntimeError(f"processes outlived the server: {left}")

    # Helpers.
    def open(self, route):
        self.driver.get(self.server.url + "/" + route)

    def wait(self, cond, timeout=30, message=""):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.2,
                             ignored_exceptions=(StaleElementReferenceException,)).until(cond, message)

    def css(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait_css(self, selector, timeout=30, count=1):
        return self.wait(lambda d: (lambda els: els if len(els) >= count else False)(self.css(selector)),
                         timeout, f"waiting for {count} x {selector}")

    def text(self, selector):
        els = self.css(selector)
        return els[0].text if els else ""

    def click(self, selector, timeout=20):
        el = self.wait_css(selector, timeout)[0]
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
        el.click()

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, name + ".png"))

    def set_text(self, selector, text):
        el = self.wait_css(selector)[0]
        self.driver.execute_script(
            "arguments[0].value = arguments[1];"
            "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));", el, text)

    def confirm(self):
        self.wait_css("[data-testid=confirm-dialog]")
        self.click("[data-testid=confirm-ok]")
        self.wait(lambda d: not self.css("[data-testid=confirm-dialog]"), 20, "the dialog closes")

    def api_state(self, path):
        status, obj = self.server.get(path)
        return status, obj

    # The tests, in order (unittest runs them by name).
    def test_1_jobs_page_follows_a_job_live(self):
        self.open("#/jobs")
        self.wait_css("[data-testid=jobs-table]")
        # Remember every state the row shows, and prove the page never reloads.
        self.driver.execute_script("""
          window.__noReload = true; window.__states = [];
          new MutationObserver(() => {
            const row = document.querySelector('[data-testid=job-row][data-name="pytorch-digits"]');
            const s = row && row.getAttribute('data-state');
            if (s && window.__states[window.__states.length - 1] !== s) window.__states.push(s);
          }).observe(document.body, {subtree: true, childList: true, attributes: true});""")
        with open(os.path.join(ARGS.source, "examples", "pytorch-digits.yaml")) as f:
            self.server.create_yaml("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", f.read())
        self.wait_css('[data-testid=job-row][data-name="pytorch-digits"]', 20)
        self.wait(lambda d: d.execute_script("return window.__states.some(s => s === 'Running')"), 60,
                  "the row shows Running")
        self.shot("jobs-running")
        self.wait(lambda d: d.execute_script("return window.__states.includes('Succeeded')"), 90,
                  "the row shows Succeeded")
        states = self.driver.execute_script("return window.__states")
        self.assertTrue(self.driver.execute_script("return window.__noReload === true"), "the page reloaded")
        self.assertEqual(states[-1], "Succeeded", states)
        self.assertTrue({"Created", "Running"} & set(states[:-1]), states)
        row = self.css('[data-testid=job-row][data-name="pytorch-digits"]')[0]
        self.assertIn("PyTorchJob", row.text)
        # The filters: a kind that is not there hides the row; the state filter keeps it.
        kind = self.css("[data-testid=kind-filter]")[0]
        self.driver.execute_script("arguments[0].value='TFJob'; arguments[0].dispatchEvent(new Event('change', {bubbles:true}))", kind)
        self.wait(lambda d: not self.css('[data-testid=job-row][data-name="pytorch-digits"]'), 10, "TFJob filter hides it")
        self.driver.execute_script("arguments[0].value=''; arguments[0].dispatchEvent(new Event('change', {bubbles:true}))", kind)
        self.wait_css('[data-testid=job-row][data-name="pytorch-digits"]', 10)
        self.shot("jobs")

    def test_2_job_page_shows_replicas_logs_metrics_events(self):
        with open(os.path.join(ARGS.source, "examples", "pytorch-digits.yaml")) as f:
            text = f.read().replace("name: pytorch-digits", "name: digits-live")
        self.server.create_yaml("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", text)
        self.open("#/jobs/PyTorchJob/default/digits-live")
        self.wait_css("[data-testid=job-page]", 20)
        # Replicas: master and two workers.
        self.wait_css("[data-testid=replica-row]", 40, count=3)
        self.wait_css("[data-testid=event-row]", 20)
        self.shot("job-overview-running")
        # Logs follow the master while it runs: text arrives without a reload.
        self.click("[data-testid=tab-logs]")
        self.wait_css("[data-testid=log-text]")
        self.assertTrue(self.css("[data-testid=log-follow]")[0].is_selected())
        self.wait(lambda d: "epoch=" in self.text("[data-testid=log-text]"), 60, "log lines appear")
        self.wait(lambda d: "accuracy=" in self.text("[data-testid=log-text]"), 60,
                  "the followed log reaches the end of training")
        # The search box filters lines.
        self.set_text("[data-testid=log-search]", "accuracy=")
        self.wait(lambda d: all("accuracy=" in l for l in self.text("[data-testid=log-text]").splitlines() if l), 10)
        self.shot("job-logs")
        # Metrics: one uPlot chart per metric, each with its one series.
        self.wait(lambda d: self.server.get("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/digits-live")[1]
                  .get("status", {}).get("completionTime"), 60, "the job finishes")
        self.click("[data-testid=tab-metrics]")
        charts = self.wait_css("[data-testid=metric-chart]", 30, count=2)
        names = {c.get_attribute("data-metric") for c in charts}
        self.assertTrue({"loss", "accuracy"} <= names, names)
        loss = self.wait_css("[data-testid=chart-loss] canvas", 10)[0]
        self.assertGreater(loss.size["width"], 100)
        # uPlot's legend: the x series plus one per metric.
        self.assertEqual(len(self.css("[data-testid=chart-loss] .u-legend .u-series")), 2)
        self.assertEqual(self.css("[data-testid=chart-loss]")[0].get_attribute("data-series"), "1")
        self.wait(lambda d: int(self.css("[data-testid=chart-loss]")[0].get_attribute("data-points")) >= 5, 20,
                  "the loss chart has every epoch")
        self.click("[data-testid=x-time]")
        self.wait_css("[data-testid=chart-loss] canvas", 10)
        self.shot("job-metrics")
        self.click("[data-testid=tab-events]")
        reasons = {e.get_attribute("data-reason") for e in self.wait_css("[data-testid=event-row]", 20)}
        self.assertIn("SuccessfulCreatePod", reasons)
        self.click("[data-testid=tab-overview]")
        self.wait(lambda d: self.text("[data-testid=job-state]") == "Succeeded", 30)
        self.wait_css('[data-testid=condition][data-type="Succeeded"][data-status="True"]', 10)
        self.shot("job-overview")
        self.click("[data-testid=tab-manifest]")
        self.assertIn("kind: PyTorchJob", self.wait_css("[data-testid=manifest]")[0].text)

    def test_3_experiment_page(self):
        self.server.create_yaml("/apis/kubeflow.org/v1beta1/namespaces/default/experiments", EXPERIMENT)
        self.open("#/experiments/default/ui-tune")
        self.wait_css("[data-testid=experiment-page]", 20)
        self.wait_css("[data-testid=trial-row]", 60, count=3)
        self.wait(lambda d: self.css("[data-testid=experiment-page]")[0].get_attribute("data-state") == "Succeeded",
                  90, "the experiment succeeds")
        # Every trial has its objective value in the table.
        self.wait(lambda d: all(r.get_attribute("data-objective") for r in self.css("[data-testid=trial-row]")), 30,
                  "objective values")
        self.wait(lambda d: all(r.get_attribute("data-state") == "Succeeded" for r in self.css("[data-testid=trial-row]")),
                  30, "every trial shows Succeeded")
        values = [float(r.get_attribute("data-objective")) for r in self.css("[data-testid=trial-row]")]
        self.assertTrue(all(0.5 <= v <= 1 for v in values), values)
        # Sorting by the objective (maximize: best first).
        self.click("[data-testid=sort-objective]")
        self.wait(lambda d: [float(r.get_attribute("data-objective")) for r in self.css("[data-testid=trial-row]")]
                  == sorted(values, reverse=True), 10, "sorted by objective")
        # Best so far: a uPlot chart, objective points and the best-so-far line.
        self.wait_css("[data-testid=best-so-far-chart] canvas", 20)
        self.assertEqual(len(self.css("[data-testid=best-so-far-chart] .u-legend .u-series")), 3)
        # Parallel coordinates: one line per trial over lr, layers, optimizer and accuracy.
        svg = self.wait_css("[data-testid=parcoords-svg]", 20)[0]
        self.assertEqual(svg.get_attribute("data-axes"), "4")
        self.wait(lambda d: len(self.css("[data-testid=parcoords-line]")) == 3, 20, "three lines")
        # Every trial's curve overlaid: a series per trial.
        self.wait(lambda d: self.css("[data-testid=trial-curves-chart]") and
                  self.css("[data-testid=trial-curves-chart]")[0].get_attribute("data-series") == "3", 30,
                  "a curve per trial")
        self.wait_css("[data-testid=trial-curves-chart] canvas", 10)
        self.shot("experiment")
        # And the jobs page lists it.
        self.open("#/jobs")
        self.wait_css('[data-testid=experiment-row][data-name="ui-tune"]', 20)

    def test_3b_optimization_job_page_draws_the_pareto_front(self):
        self.server.create_yaml("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes", RUNTIME)
        self.server.create_yaml("/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/optimizationjobs",
                                OPTIMIZATION)
        self.open("#/optimizationjobs/default/ui-pareto")
        self.wait_css("[data-testid=optimization-page]", 20)
        self.wait(lambda d: self.css("[data-testid=optimization-page]")[0].get_attribute("data-state") == "Succeeded",
                  90, "the search ends Complete")
        self.wait_css("[data-testid=optimization-trial]", 20, count=5)
        # Each trial's progress, from the epochs it printed.
        self.wait(lambda d: [p.get_attribute("data-percent") for p in self.css("[data-testid=optimization-trial] [data-testid=progress]")]
                  == ["100"] * 5, 30, "every trial at 100%")
        # Every trial drawn; the front's members marked, as the status names them.
        self.wait(lambda d: len(self.css("[data-testid=pareto-point]")) == 5, 30, "a point per trial")
        status, job = self.api_state("/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/optimizationjobs/ui-pareto")
        self.assertEqual(status, 200)
        front = sorted(r["trainJobName"] for r in job["status"]["paretoFront"])
        drawn = sorted(p.get_attribute("data-trial") for p in self.css("[data-testid=pareto-point][data-front=true]"))
        self.assertEqual(drawn, front)
        self.assertGreaterEqual(len(front), 1)
        self.shot("optimization")
        # The jobs page lists it, and hides its TrainJobs as its children.
        self.open("#/jobs")
        self.wait_css('[data-testid=optimizationjob-row][data-name="ui-pareto"]', 20)
        self.assertFalse(self.css('[data-testid=job-row][data-name^="ui-pareto-trial-"]'))

    def test_4_submit_page_shows_field_errors_and_creates_nothing(self):
        self.open("#/submit")
        self.set_text("[data-testid=manifest-input]", BAD_MANIFEST)
        self.click("[data-testid=validate-button]")
        errors = self.wait_css("[data-testid=field-error]", 20)
        fields = [e.get_attribute("data-field") for e in errors]
        self.assertIn("spec.pytorchReplicaSpecs[Master].restartPolicy", fields)
        self.assertTrue(any("containerz" in f for f in fields), fields)
        self.assertFalse(self.css("[data-testid=create-button]")[0].is_enabled())
        self.shot("submit-errors")
        status, _ = self.server.get("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/ui-bad-job")
        self.assertEqual(status, 404, "a dry run must create nothing")

    def test_5_submit_then_suspend_resume_and_delete(self):
        path = "/apis/batch/v1/namespaces/default/jobs/ui-sleeper"
        self.open("#/submit")
        self.set_text("[data-testid=manifest-input]", SLEEPER)
        self.click("[data-testid=validate-button]")
        self.wait_css('[data-testid=doc-result][data-ok="true"]', 20)
        self.assertEqual(self.server.get(path)[0], 404, "validating created it")
        self.click("[data-testid=create-button]")
        link = self.wait_css("[data-testid=created-link]", 20)[0]
        self.assertEqual(self.server.get(path)[0], 200)
        link.click()
        self.wait_css("[data-testid=job-page]", 20)
        self.wait(lambda d: self.text("[data-testid=job-state]") == "Running", 40, "the sleeper runs")
        # Suspend, after a confirmation; cancelling changes nothing.
        self.click("[data-testid=suspend-button]")
        self.wait_css("[data-testid=confirm-dialog]")
        self.click("[data-testid=confirm-cancel]")
        self.wait(lambda d: not self.css("[data-testid=confirm-dialog]"), 10)
        self.assertFalse(self.server.get(path)[1]["spec"].get("suspend"))
        self.click("[data-testid=suspend-button]")
        self.shot("confirm-suspend")
        self.confirm()
        self.wait(lambda d: self.server.get(path)[1]["spec"].get("suspend") is True, 20, "suspended in the API")
        self.wait(lambda d: self.text("[data-testid=job-state]") == "Suspended", 20, "the page shows Suspended")
        self.wait(lambda d: self.text("[data-testid=suspend-button]") == "Resume", 10)
        self.shot("job-suspended")
        self.click("[data-testid=suspend-button]")
        self.confirm()
        self.wait(lambda d: self.server.get(path)[1]["spec"].get("suspend") is False, 20, "resumed in the API")
        self.wait(lambda d: self.text("[data-testid=job-state]") == "Running", 40, "the page shows Running")
        # Delete, after a confirmation.
        self.click("[data-testid=delete-button]")
        self.confirm()
        self.wait(lambda d: self.server.get(path)[0] == 404, 20, "deleted in the API")
        self.wait(lambda d: "#/jobs" in d.current_url, 10)

    def test_6_compare_and_queues_pages(self):
        # Compare: two of the experiment's trials and the live job, overlaid.
        status, trials = self.server.get(
            "/apis/kubeflow.org/v1beta1/namespaces/default/trials?labelSelector=katib.kubeflow.org/experiment=ui-tune")
        self.assertEqual(status, 200)
        names = sorted(t["metadata"]["name"] for t in trials["items"])[:2]
        self.assertEqual(len(names), 2, "test_3 made the trials")
        items = ",".join([f"Trial/default/{n}" for n in names] + ["PyTorchJob/default/digits-live"])
        self.open(f"#/compare?items={items}")
        self.wait_css("[data-testid=compare-item]", 20, count=3)
        self.wait(lambda d: self.css("[data-testid=compare-chart]") and
                  self.css("[data-testid=compare-chart]")[0].get_attribute("data-series") == "3", 30, "three curves")
        self.wait_css("[data-testid=compare-chart] canvas", 10)
        # The trials' parameters differ (lr at least).
        params = [r.get_attribute("data-param") for r in self.wait_css("[data-testid=param-row]", 20)]
        self.assertIn("lr", params)
        self.shot("compare")
        # Queues: created through the submit page (several documents, two of
        # them cluster-scoped), then shown with the node.
        with open(os.path.join(ARGS.source, "examples", "scheduling", "queues.yaml")) as f:
            queues = f.read()
        self.open("#/submit")
        self.set_text("[data-testid=manifest-input]", queues)
        self.click("[data-testid=validate-button]")
        self.wait(lambda d: len(self.css('[data-testid=doc-result][data-ok="true"]')) == 6, 20, "six valid documents")
        self.click("[data-testid=create-button]")
        self.wait(lambda d: "6 created" in self.text("[data-testid=submit-summary]"), 20, "six created")
        self.open("#/queues")
        self.wait_css("[data-testid=node-row]", 20)
        self.wait_css("[data-testid=clusterqueue-row]", 20, count=2)
        self.wait_css("[data-testid=localqueue-row]", 20, count=2)
        self.shot("queues")

    def test_7_token_form_on_401(self):
        # A second server that wants a bearer token: the page asks for it,
        # keeps it, and then lists jobs with it.
        # Tokens need HTTPS: a self-signed certificate for 127.0.0.1.
        if not shutil.which("openssl"):
            self.skipTest("openssl is needed to make the token test's certificate")
        token_dir = tempfile.mkdtemp(prefix="ty-ui-token-")
        token_file = os.path.join(token_dir, "tokens")
        cert, key = os.path.join(token_dir, "cert.pem"), os.path.join(token_dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(token_file, "w") as f:
            f.write("ui-test-token alice *\n")
        server = Server(ARGS.trainyard, ARGS.source, ARGS.ui_dir,
                        ["--token-file", token_file, "--tls-cert", cert, "--tls-key", key])
        try:
            status, _ = server.get("/apis/kubeflow.org/v1/pytorchjobs")
            self.assertEqual(status, 401)
            self.driver.get(server.url + "/#/jobs")
            self.wait_css("[data-testid=token-form]", 20)
            self.shot("token-form")
            self.css("[data-testid=token-input]")[0].send_keys("ui-test-token")
            self.click("[data-testid=token-save]")
            self.wait_css("[data-testid=jobs-table]", 20)
            # Only a list that loaded says it is empty.
            self.wait(lambda d: self.css("[data-testid=jobs-empty]") and not self.css("[data-testid=token-form]"), 20,
                      "the jobs list loads with the token")
            self.assertEqual(self.driver.execute_script("return localStorage.getItem('trainyard.token')"), "ui-test-token")
        finally:
            try:
                self.driver.execute_script("localStorage.removeItem('trainyard.token')")
            finally:
                server.stop()
            shutil.rmtree(server.home, ignore_errors=True)
            shutil.rmtree(token_dir, ignore_errors=True)

    def test_8_jobs_page_pages_many_jobs(self):
        # 250 suspended jobs (no pods): the table shows 100 rows a page.
        import concurrent.futures

        def make(i):
            body = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                    "metadata": {"name": f"bulk-{i:04d}", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
                    "spec": {"runPolicy": {"suspend": True}, "pytorchReplicaSpecs": {"Master": {
                        "replicas": 1, "restartPolicy": "OnFailure",
                        "template": {"spec": {"containers": [{"name": "pytorch", "image": "x", "command": ["true"]}]}}}}}}
            status, out = self.server.request("POST", "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", json.dumps(body))
            self.assertEqual(status, 201, out)

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(make, range(250)))
        self.open("#/jobs")
        self.wait(lambda d: re.search(r"of (\d+) jobs", self.text("[data-testid=page-info]")) and
                  int(re.search(r"of (\d+) jobs", self.text("[data-testid=page-info]")).group(1)) >= 252, 30, "all jobs listed")
        self.assertEqual(len(self.css("[data-testid=job-row]")), 100)
        self.click("[data-testid=page-next]")
        self.wait(lambda d: self.text("[data-testid=page-info]").startswith("page 2 of 3"), 10)
        self.assertEqual(len(self.css("[data-testid=job-row]")), 100)
        self.click("[data-testid=page-next]")
        self.wait(lambda d: self.text("[data-testid=page-info]").startswith("page 3 of 3"), 10)
        self.assertGreaterEqual(len(self.css("[data-testid=job-row]")), 50)
        # Filters: suspended ones only; a name search.
        state = self.css("[data-testid=state-filter]")[0]
        self.driver.execute_script("arguments[0].value='Suspended'; arguments[0].dispatchEvent(new Event('change', {bubbles:true}))", state)
        self.wait(lambda d: "250 of" in self.text("[data-testid=page-info]"), 10, "250 suspended")
        self.set_text("[data-testid=job-search]", "bulk-012")
        self.wait(lambda d: "10 of" in self.text("[data-testid=page-info]") and len(self.css("[data-testid=job-row]")) == 10, 10)
        self.shot("jobs-many")



    def test_9_an_mlflow_metric_is_charted_by_its_steps(self):
        # What a job logs with MLflow's client, drawn on its page by the
        # steps it logged.
        self.server.create_yaml("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", MLFLOW_JOB)
        path = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/ui-mlflow"
        self.wait(lambda d: self.server.get(path)[1].get("status", {}).get("completionTime"), 90,
                  "the MLflow job finishes")
        self.open("#/jobs/PyTorchJob/default/ui-mlflow")
        self.click("[data-testid=tab-metrics]")
        chart = "[data-testid=chart-mlflow_loss]"
        self.wait(lambda d: self.css(chart) and self.css(chart)[0].get_attribute("data-points") == "4", 30,
                  "the MLflow metric's chart has its 4 values")
        self.assertEqual(self.css(chart)[0].get_attribute("data-xmax"), "40")
        self.shot("job-mlflow-metrics")
        # Its artifacts: what mlflow.log_artifact copied and what it wrote
        # to its output folder, listed and downloaded with the token.
        self.click("[data-testid=tab-artifacts]")
        self.wait_css("[data-testid=artifact-row]", count=2)
        self.assertEqual([r.get_attribute("data-path") for r in self.css("[data-testid=artifact-row]")],
                         ["model.txt", "notes.txt"])
        downloads = tempfile.mkdtemp(prefix="ty-ui-downloads-")
        self.driver.execute_cdp_cmd("Page.setDownloadBehavior",
                                    {"behavior": "allow", "downloadPath": downloads})
        self.css("[data-testid=artifact-download]")[0].click()
        got = os.path.join(downloads, "model.txt")
        self.wait(lambda d: os.path.exists(got) and open(got).read() == "weights\n", 20,
                  "the artifact is downloaded whole")
        shutil.rmtree(downloads, ignore_errors=True)
        self.shot("job-artifacts")
        # A route may spell the kind as kubectl takes it.
        self.open("#/jobs/pytorchjobs/default/ui-mlflow")
        self.wait(lambda d: self.css("[data-testid=job-name]") and
                  self.text("[data-testid=job-name]") == "ui-mlflow", 20, "a lower-case kind routes")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainyard", required=True, help="the trainyard binary")
    parser.add_argument("--source", required=True, help="the repository (examples/ and the jobs' working directory)")
    parser.add_argument("--artifacts", required=True, help="where screenshots and logs go")
    parser.add_argument("--ui-dir", help="serve the dashboard from this web/ folder (TRAINYARD_UI_DIR)")
    ARGS, rest = parser.parse_known_args()
    ARGS.source = os.path.abspath(ARGS.source)
    ARGS.artifacts = os.path.abspath(ARGS.artifacts)
    result = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    # Every test skipped (no browser here): ctest's SKIP_RETURN_CODE says so.
    if result.skipped and len(result.skipped) >= result.testsRun:
        sys.exit(77)


if __name__ == "__main__":
    main()
