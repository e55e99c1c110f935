"""Debian's python3-kubernetes client against a running trainyard server.

Usage: kube_client_check.py KUBECONFIG

Creates a PyTorchJob with CustomObjectsApi, lists it, watches it to
Succeeded, reads its master's log through CoreV1Api, deletes it and sees it
gone. Exits 0 when every step did what Kubernetes would; prints the step
that did not otherwise.
"""
import sys

from kubernetes import client, config, watch

GROUP, VERSION, PLURAL, NS = "kubeflow.org", "v1", "pytorchjobs", "default"

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"generateName": "py-client-"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {"spec": {"containers": [{
                    "name": "pytorch", "image": "none",
                    "command": ["sh", "-c", "echo rank $RANK of $WORLD_SIZE"],
                }]}},
            },
            "Worker": {
                "replicas": 1,
                "template": {"spec": {"containers": [{
                    "name": "pytorch", "image": "none", "command": ["true"],
                }]}},
            },
        },
    },
}


def last_condition(job):
    conditions = job.get("status", {}).get("conditions", [])
    return conditions[-1]["type"] if conditions else ""


def main():
    config.load_kube_config(config_file=sys.argv[1])
    custom = client.CustomObjectsApi()
    core = client.CoreV1Api()

    created = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, JOB)
    name = created["metadata"]["name"]
    assert name.startswith("py-client-") and len(name) == len("py-client-") + 5, name
    assert created["spec"]["runPolicy"]["cleanPodPolicy"] == "None", "defaults applied"

    listed = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    assert [j["metadata"]["name"] for j in listed["items"]] == [name], listed

    state = ""
    stream = watch.Watch().stream(custom.list_namespaced_custom_object, GROUP, VERSION, NS,
                                  PLURAL, timeout_seconds=60)
    for event in stream:
        if event["object"]["metadata"]["name"] != name:
            continue
        state = last_condition(event["object"])
        if state in ("Succeeded", "Failed"):
            break
    assert state == "Succeeded", f"watched the job end as {state!r}"

    log = core.read_namespaced_pod_log(f"{name}-master-0", NS)
    assert log == "rank 0 of 2\n", repr(log)
    pods = core.list_namespaced_pod(NS, label_selector=f"training.kubeflow.org/job-name={name}")
    # The job is done with its master: a worker still running then is
    # stopped and deleted (cleanPodPolicy keeps finished pods only).
    names = [p.metadata.name for p in pods.items]
    assert names[0] == f"{name}-master-0" and names[1:] in ([], [f"{name}-worker-0"]), pods

    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    try:
        custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
        raise AssertionError("the deleted job is still there")
    except client.exceptions.ApiException as e:
        assert e.status == 404, e

    # An invalid job: 422, with the field at fault.
    bad = dict(JOB, metadata={"name": "bad"})
    bad["spec"] = {"pytorchReplicaSpecs": {"Master": dict(JOB["spec"]["pytorchReplicaSpecs"]["Master"], replicas=2)}}
    try:
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, bad)
        raise AssertionError("an invalid job was accepted")
    except client.exceptions.ApiException as e:
        assert e.status == 422 and "spec.pytorchReplicaSpecs[Master].replicas" in e.body, e
    print("python client: every step as expected")


if __name__ == "__main__":
    main()
