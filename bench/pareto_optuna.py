"""Optuna's samplers on bench/pareto_bench.cc's two-objective problems.

The anchor beside trainyard's figures: the same problems, bounds,
reference points, budget and number of seeds; the hypervolume of each
run's trials, its median and quartiles per sampler (Optuna's TPESampler on
two objectives is MOTPE; NSGAIISampler with its defaults; RandomSampler).

    /usr/bin/python3 bench/pareto_optuna.py --trials 60 --seeds 20
"""
import argparse
import math
import statistics
import time

import optuna


def zdt_g(x):
    return 1 + 9 * sum(x[1:]) / (len(x) - 1)


def zdt1(x):
    g = zdt_g(x)
    return x[0], g * (1 - math.sqrt(x[0] / g))


def zdt2(x):
    g = zdt_g(x)
    return x[0], g * (1 - (x[0] / g) ** 2)


def fonseca(x):
    shift = 1 / math.sqrt(len(x))
    a = sum((v - shift) ** 2 for v in x)
    b = sum((v + shift) ** 2 for v in x)
    return 1 - math.exp(-a), 1 - math.exp(-b)


PROBLEMS = [
    ("zdt1-5d", 5, 0.0, 1.0, (1.1, 11.0), zdt1),
    ("zdt2-5d", 5, 0.0, 1.0, (1.1, 11.0), zdt2),
    ("fonseca-3d", 3, -4.0, 4.0, (1.1, 1.1), fonseca),
]


def hypervolume(points, reference):
    """The area two-objective `points` dominate up to `reference`."""
    inside = sorted(p for p in points if p[0] < reference[0] and p[1] < reference[1])
    area, best = 0.0, reference[1]
    for i, (f1, f2) in enumerate(inside):
        if f2 >= best:
            continue
        right = reference[0]
        area += (right - f1) * (best - f2)
        best = f2
    return area


def run(problem, make_sampler, seed, trials):
    _, dim, low, high, reference, evaluate = problem
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=make_sampler(seed))

    def objective(trial):
        return evaluate([trial.suggest_float(f"x{i}", low, high) for i in range(dim)])

    study.optimize(objective, n_trials=trials)
    return hypervolume([t.values for t in study.trials], reference)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {
        "optuna-random": lambda s: optuna.samplers.RandomSampler(seed=s),
        "optuna-motpe": lambda s: optuna.samplers.TPESampler(seed=s),
        "optuna-nsga2": lambda s: optuna.samplers.NSGAIISampler(seed=s),
    }
    print(f"optuna {optuna.__version__}")
    print(f"{'problem':<11} {'algorithm':<17} {'HV median':>10} {'HV p25':>10} {'HV p75':>10} "
          f"{'s/trial':>10}")
    for problem in PROBLEMS:
        for name, make in samplers.items():
            start = time.perf_counter()
            volumes = [run(problem, make, 1000 + s, args.trials) for s in range(args.seeds)]
            per_trial = (time.perf_counter() - start) / (args.seeds * args.trials)
            q = statistics.quantiles(volumes, n=4) if len(volumes) > 1 else volumes * 3
            print(f"{problem[0]:<11} {name:<17} {statistics.median(volumes):>10.4f} "
                  f"{q[0]:>10.4f} {q[2]:>10.4f} {per_trial:>10.5f}")


if __name__ == "__main__":
    main()
