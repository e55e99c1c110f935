"""Checks the JAXJob contract the way jax.distributed.initialize reads it.

COORDINATOR_ADDRESS:COORDINATOR_PORT is served by process 0; NUM_PROCESSES
and PROCESS_ID number the replicas. Process 0 listens there and every other
process reports its id; the coordinator requires each of 1..N-1 exactly
once and answers with the world it saw. Needs no JAX; exits non-zero on the
first broken promise.
"""
import os
import socket
import sys
import time


def fail(message):
    print(f"JAX contract check failed: {message}", flush=True)
    sys.exit(1)


def coordinate(port, processes):
    seen = []
    with socket.create_server(("", port)) as listener:
        conns = []
        while len(seen) < processes - 1:
            conn, _ = listener.accept()
            seen.append(int(conn.recv(16).decode()))
            conns.append(conn)
        if sorted(seen) != list(range(1, processes)):
            fail(f"process ids {sorted(seen)}, want 1..{processes - 1}")
        for conn in conns:
            conn.sendall(f"world {processes}".encode())
            conn.close()


def report(address, port, process_id, deadline):
    while True:
        try:
            with socket.create_connection((address, port), timeout=30) as conn:
                conn.sendall(str(process_id).encode())
                return conn.recv(16).decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # the coordinator is still starting


def main():
    address = os.environ["COORDINATOR_ADDRESS"]
    port = int(os.environ["COORDINATOR_PORT"])
    processes, process_id = int(os.environ["NUM_PROCESSES"]), int(os.environ["PROCESS_ID"])
    if not os.environ.get("HOSTNAME", "").endswith(f"-worker-{process_id}"):
        fail(f"PROCESS_ID {process_id} is not this replica ({os.environ.get('HOSTNAME')})")
    if process_id == 0:
        coordinate(port, processes)
    else:
        answer = report(address, port, process_id, time.monotonic() + 60)
        if answer != f"world {processes}":
            fail(f"coordinator answered {answer!r}")
    print(f"process {process_id}/{processes} met the coordinator at {address}:{port}", flush=True)


if __name__ == "__main__":
    main()
