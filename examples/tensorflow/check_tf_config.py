"""Checks the TFJob contract the way TensorFlow's cluster resolver reads it.

TF_CONFIG must be JSON with "cluster" (role -> list of host:port), "task"
(this replica's role and index) and "environment": "cloud". The task must be
this replica (its HOSTNAME is <job>-<role>-<index>), and the addresses must
really work: each replica listens on its own address and greets every other
one, and every greeting must come back from the replica it was sent to.
Needs no TensorFlow; exits non-zero on the first broken promise.
"""
import json
import os
import socket
import sys
import threading
import time


def fail(message):
    print(f"TF_CONFIG check failed: {message}", flush=True)
    sys.exit(1)


def serve(listener, me, expected_greetings):
    """Answers each greeting with this replica's identity."""
    for _ in range(expected_greetings):
        conn, _ = listener.accept()
        with conn:
            conn.recv(64)
            conn.sendall(me.encode())


def greet(address, deadline):
    host, port = address.rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                conn.sendall(b"hello")
                return conn.recv(64).decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # the peer is still starting


def main():
    config = json.loads(os.environ.get("TF_CONFIG") or fail("TF_CONFIG is not set"))
    cluster, task = config["cluster"], config["task"]
    if config.get("environment") != "cloud":
        fail(f"environment is {config.get('environment')!r}, want 'cloud'")
    me = f"{task['type']}-{task['index']}"
    if not os.environ.get("HOSTNAME", "").endswith("-" + me):
        fail(f"task {me} is not this replica ({os.environ.get('HOSTNAME')})")
    peers = {f"{role}-{i}": address
             for role, addresses in cluster.items() for i, address in enumerate(addresses)}
    if len(set(peers.values())) != len(peers):
        fail(f"two replicas share an address: {peers}")
    own = peers.pop(me)
    listener = socket.create_server(("", int(own.rsplit(":", 1)[1])))
    server = threading.Thread(target=serve, args=(listener, me, len(peers)))
    server.start()
    deadline = time.monotonic() + 60
    for name, address in sorted(peers.items()):
        answer = greet(address, deadline)
        if answer != name:
            fail(f"{address} answered as {answer!r}, want {name!r}")
    server.join()
    print(f"{me}: TF_CONFIG names {len(peers) + 1} replicas, reached all {len(peers)} peers",
          flush=True)


if __name__ == "__main__":
    main()
