"""What MLflow's client sends, run in a replica: the REST calls of
mlflow.start_run() (with MLFLOW_RUN_ID set), log_param, log_metric,
log_artifact and end_run, in that order, with the variables trainyard gives replicas. The
mlflow package is in no registry this project builds from, so the tests
make its calls themselves, in the shapes of MLflow's REST documentation.

Usage: mlflow_client_calls.py METRIC STEP:VALUE...
"""
import json
import os
import sys
import urllib.parse
import urllib.request

BASE = os.environ["MLFLOW_TRACKING_URI"] + "/api/2.0/mlflow/"
RUN = os.environ["MLFLOW_RUN_ID"]
HEADERS = {"Content-Type": "application/json",
           "Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"]}


def get(method, **query):
    url = BASE + method + "?" + urllib.parse.urlencode(query)
    return json.load(urllib.request.urlopen(urllib.request.Request(url, headers=HEADERS)))


def post(method, **body):
    body.update(run_id=RUN, run_uuid=RUN)
    request = urllib.request.Request(BASE + method, data=json.dumps(body).encode(),
                                     headers=HEADERS, method="POST")
    return json.load(urllib.request.urlopen(request))


def log_artifact(artifact_uri, name, text):
    """mlflow.log_artifact of a file with a file: artifact_uri (its
    LocalArtifactRepository): a copy into that folder."""
    assert artifact_uri.startswith("file://"), artifact_uri
    folder = urllib.parse.urlparse(artifact_uri).path
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as out:
        out.write(text)


def main():
    metric, points = sys.argv[1], sys.argv[2:]
    info = get("runs/get", run_id=RUN)["run"]["info"]
    post("runs/update", status="RUNNING")
    post("runs/log-parameter", key="lr", value="0.01")
    for n, point in enumerate(points):
        step, value = point.split(":")
        post("runs/log-metric", key=metric, value=float(value),
             timestamp=1700000000000 + n, step=int(step))
    log_artifact(info["artifact_uri"], "notes.txt", "what mlflow.log_artifact copied\n")
    # What code that knows trainyard does: write to the job's output folder.
    with open(os.path.join(os.environ["TRAINYARD_OUTPUT_DIR"], "model.txt"), "w") as out:
        out.write("weights\n")
    post("runs/update", status="FINISHED", end_time=1700000009000)
    print("logged to", info["run_name"], "as", RUN)


if __name__ == "__main__":
    main()
