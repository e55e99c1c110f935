"""Distributed XGBoost on scikit-learn's bundled digits, with xgboost's own tracker.

Reads the XGBoostJob contract (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK).
The Master (rank 0) starts xgboost's RabitTracker on MASTER_ADDR:MASTER_PORT;
every replica, the Master included, joins it as one worker and trains on its
own shard of the rows. The trees are built from histograms summed across all
workers, so every rank ends with the same model: the script checks that,
prints the test accuracy, and exits non-zero if it is below --target.
"""
import argparse
import hashlib
import os
import sys
import threading

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from xgboost import collective
from xgboost.tracker import RabitTracker


def start_tracker(host, port, world):
    tracker = RabitTracker(host_ip=host, n_workers=world, port=port, sortby="task")
    tracker.start(world)
    thread = threading.Thread(target=tracker.join, daemon=True)
    thread.start()
    return thread


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--target", type=float, default=0.9)
    args = parser.parse_args()

    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    tracker = start_tracker(host, port, world) if rank == 0 else None

    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=0.25, random_state=0)
    shard = slice(rank, None, world)  # each worker sees only its own rows
    with collective.CommunicatorContext(DMLC_TRACKER_URI=host, DMLC_TRACKER_PORT=port,
                                        DMLC_TASK_ID=str(rank)):
        joined = collective.get_world_size()
        print(f"rank {collective.get_rank()}/{joined} joined the tracker at {host}:{port}",
              flush=True)
        booster = xgb.train(
            {"objective": "multi:softmax", "num_class": 10, "tree_method": "hist",
             "max_depth": 4, "eta": 0.3, "nthread": 1},
            xgb.DMatrix(x_train[shard], label=y_train[shard]), num_boost_round=args.rounds)
        model = booster.save_raw(raw_format="json")
        digest = hashlib.sha256(model).hexdigest()[:16]
        # Every rank's digest reaches every rank as a vector with one slot each.
        mine = np.zeros(joined, dtype=np.float64)
        mine[collective.get_rank()] = int(digest[:12], 16)
        everyone = collective.allreduce(mine, collective.Op.SUM)
        agree = joined == world and len(set(everyone.tolist())) == 1

    accuracy = float((booster.predict(xgb.DMatrix(x_test)) == y_test).mean())
    print(f"test accuracy {accuracy:.4f}, model {digest}, world {joined}, "
          f"{'all ranks agree' if agree else 'RANKS DISAGREE'}", flush=True)
    if tracker is not None:
        tracker.join(timeout=30)
    if not agree or accuracy < args.target:
        sys.exit(1)


if __name__ == "__main__":
    main()
