"""A small MLP on scikit-learn's bundled digits, for tuning examples.

Trains with Adam for --epochs passes and prints, after each, one line in
Katib's default metric format:

    epoch=3 accuracy=0.9611 loss=0.1432

(accuracy on a fixed held-out quarter of the data, loss the training loss),
and at the end the model's size as params=<weights and biases>,
so a Katib StdOut collector sees every epoch while the trial runs and
median early stopping can act on it. The defaults are scikit-learn's own
(hidden layer of 100, learning rate 0.001, alpha 0.0001, batch 200).
"""
import argparse
import os
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler


def opt(name, default):
    """A Kubeflow OptimizationJob gives each trial's parameters as
    KUBEFLOW_TRAINER_OPT_<NAME>; flags win over them."""
    return os.environ.get("KUBEFLOW_TRAINER_OPT_" + name, default)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=opt("LR", 0.001))
    parser.add_argument("--hidden", type=int, default=opt("HIDDEN", 100))
    parser.add_argument("--alpha", type=float, default=opt("ALPHA", 0.0001))
    parser.add_argument("--batch-size", type=int, default=opt("BATCH_SIZE", 200))
    parser.add_argument("--epochs", type=int, default=opt("EPOCHS", 12))
    args = parser.parse_args()

    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)

    model = MLPClassifier(hidden_layer_sizes=(args.hidden,), learning_rate_init=args.lr,
                          alpha=args.alpha, batch_size=min(args.batch_size, len(x_train)),
                          max_iter=1, random_state=0)
    warnings.simplefilter("ignore", ConvergenceWarning)
    classes = sorted(set(y))
    for epoch in range(1, args.epochs + 1):
        model.partial_fit(x_train, y_train, classes=classes)
        accuracy = model.score(x_test, y_test)
        print(f"epoch={epoch} accuracy={accuracy:.4f} loss={model.loss_:.4f}", flush=True)
    # The model's size, a second objective to trade accuracy against.
    weights = sum(w.size for w in model.coefs_) + sum(b.size for b in model.intercepts_)
    print(f"params={weights}", flush=True)


if __name__ == "__main__":
    main()
