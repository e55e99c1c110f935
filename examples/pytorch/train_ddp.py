"""DistributedDataParallel over gloo on scikit-learn's bundled digits.

Reads the environment the PyTorchJob contract gives every replica
(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), trains a small MLP with each
rank on its own shard of the training set, prints the loss per epoch and the
test accuracy, checks that every rank ends with the same weights, and exits
non-zero if the accuracy is below --target.
"""
import argparse
import hashlib
import os
import sys

import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--target", type=float, default=0.9)
    args = parser.parse_args()

    dist.init_process_group(backend="gloo")  # env:// from the injected variables
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank}/{world} joined {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
          flush=True)

    torch.manual_seed(0)  # the same initial weights on every rank
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=0)
    shard = slice(rank, None, world)  # each rank trains on its own part
    x_mine, y_mine = x_train[shard], y_train[shard]

    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for start in range(0, len(x_mine), 32):
            optimizer.zero_grad()
            loss = loss_fn(model(x_mine[start:start + 32]), y_mine[start:start + 32])
            loss.backward()  # gradients are averaged across ranks here
            optimizer.step()
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            # name=value: what a StdOut collector reads (docs/tracking.md).
            # "epoch 5 of 30": the share done, which trainyard shows as the
            # job's progress (kubectl get trainjobs, the dashboard).
            print(f"epoch={epoch + 1} loss={loss.item():.4f} (epoch {epoch + 1} of {args.epochs})",
                  flush=True)

    with torch.no_grad():
        accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
    digest = hashlib.sha256(b"".join(
        p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()[:16]
    digests = [None] * world
    dist.all_gather_object(digests, digest)
    agree = len(set(digests)) == 1
    print(f"accuracy={accuracy:.4f}", flush=True)
    print(f"test accuracy {accuracy:.4f}, weights {digest}, "
          f"{'all ranks agree' if agree else 'RANKS DISAGREE: ' + ' '.join(digests)}", flush=True)
    dist.barrier()  # leave together
    dist.destroy_process_group()
    # Leave without running destructors. Debian's torch 1.13 destroys a DDP
    # model's gloo process group while holding the GIL, joining worker
    # threads of which one may still be freeing a tensor, which needs the
    # GIL: now and then rank 0 deadlocks at exit (pytorch/pytorch#56297,
    # fixed upstream in 2025). Everything worth keeping is printed.
    sys.stdout.flush()
    os._exit(0 if agree and accuracy >= args.target else 1)


if __name__ == "__main__":
    main()
