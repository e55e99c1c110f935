"""Debian's python3-kubernetes client execs into a pod of a trainyard server.

Usage: exec_check.py KUBECONFIG POD

Runs a command through kubernetes.stream (WebSocket, the client's channel
protocol), reads its stdout and stderr apart, sees what the replica's
sandbox holds, sends stdin, and reads the exit code from the error
channel. Exits 0 when every step did what
Kubernetes would; prints the step that did not otherwise.
"""
import sys

from kubernetes import client, config
from kubernetes.stream import stream


def main():
    config.load_kube_config(config_file=sys.argv[1])
    api = client.CoreV1Api()
    pod = sys.argv[2]
    out = stream(api.connect_get_namespaced_pod_exec, pod, "default",
                 command=["sh", "-c", "echo \"$GREETING\"; echo oops >&2"],
                 stderr=True, stdin=False, stdout=True, tty=False)
    if "hello-from-the-pod" not in out:
        print(f"exec output: {out!r}")
        return 1
    # In the replica's sandbox: its volume at its mountPath, its host name.
    seen = stream(api.connect_get_namespaced_pod_exec, pod, "default",
                  command=["sh", "-c", "cat /trainyard-exec-test/scratch/mark; hostname"],
                  stderr=True, stdin=False, stdout=True, tty=False)
    if seen != f"pods-own\n{pod}\n":
        print(f"sandbox view: {seen!r}")
        return 1
    session = stream(api.connect_get_namespaced_pod_exec, pod, "default",
                     command=["sh", "-c", "read line; echo \"got $line\"; exit 4"],
                     stderr=True, stdin=True, stdout=True, tty=False,
                     _preload_content=False)
    session.write_stdin("from-python\n")
    session.run_forever(timeout=30)
    got = session.read_stdout()
    code = session.returncode
    session.close()
    if "got from-python" not in got or code != 4:
        print(f"stdin session: stdout {got!r}, exit code {code!r}")
        return 1
    print("exec: every step as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
