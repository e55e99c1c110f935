"""One stretch of a population member's training, for population-based
training: a small PyTorch MLP on scikit-learn's bundled digits.

Resumes from the checkpoint in --checkpoint (the model, the optimiser's
state and the epoch count) when there is one, which is how a member goes on
from its parent's weights; sets the learning rate and momentum it was given
(PBT changes them between stretches); trains --epochs more epochs; writes
the checkpoint back; and prints, after each epoch, one line in Katib's
default metric format:

    epoch=5 Validation-accuracy=0.9622

(accuracy on a fixed held-out quarter of the data). A resumed stretch goes
on counting epochs from its parent's.
"""
import argparse
import os

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def data():
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_train)
    as_tensor = lambda a: torch.tensor(a, dtype=torch.float32)
    return (as_tensor(scaler.transform(x_train)), torch.tensor(y_train),
            as_tensor(scaler.transform(x_test)), torch.tensor(y_test))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--momentum", type=float, required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--checkpoint", required=True, help="the member's directory")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)

    x_train, y_train, x_test, y_test = data()
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    path = os.path.join(args.checkpoint, "checkpoint.pt")
    start = 0
    if os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"]
    for group in optimizer.param_groups:
        group["lr"], group["momentum"] = args.lr, args.momentum

    for epoch in range(start + 1, start + args.epochs + 1):
        order = torch.randperm(len(x_train), generator=torch.Generator().manual_seed(epoch))
        for batch in order.split(32):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        with torch.no_grad():
            accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(f"epoch={epoch} Validation-accuracy={accuracy:.4f}", flush=True)

    # Written beside, then renamed: a stretch killed mid-write leaves the
    # parent's copy intact.
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": start + args.epochs}, path + ".tmp")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
