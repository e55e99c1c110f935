#!/usr/bin/python3
"""Optuna on trainyard's sampler benchmark: the anchor numbers.

Runs Debian's python3-optuna (3.1) on the closed-form functions of
bench/tune_functions.h with the same budgets and seeds as bench/tune_bench.cc,
and times study.ask() at given history sizes. Writes JSON that
bench/compare_tuning.py reads.

Run with Debian's interpreter (the one that has optuna):
  /usr/bin/python3 bench/optuna_anchor.py --json optuna.json            # all
  /usr/bin/python3 bench/optuna_anchor.py --mode quality --seeds 20 --samplers tpe

Samplers:
  tpe               TPESampler(seed=s): Optuna's default (create_study's sampler)
  multivariate-tpe  TPESampler(seed=s, multivariate=True, constant_liar=True): what
                    Katib's multivariate-tpe asks of its Optuna service
  random            RandomSampler(seed=s)
  cmaes             CmaEsSampler(seed=s)

Each (sampler, function, seed) is one study run to the largest budget; the
best value after the first b trials is the result for budget b. None of these
samplers knows the budget, so this equals separate runs of b trials.
"""

import argparse
import json
import math
import random
import statistics
import sys
import time
import warnings

# ---------------------------------------------------------------------------
# The functions. THESE MUST MATCH bench/tune_functions.h (names, bounds, f*,
# definitions, operation order where it matters): compare_tuning.py checks both
# at fixed points before comparing.

PI = math.pi


def branin(x):
    b, c, t = 5.1 / (4 * PI * PI), 5 / PI, 1 / (8 * PI)
    u = x[1] - b * x[0] * x[0] + c * x[0] - 6
    return u * u + 10 * (1 - t) * math.cos(x[0]) + 10


def six_hump_camel(x):
    a, b = x[0] * x[0], x[1] * x[1]
    return (4 - 2.1 * a + a * a / 3) * a + x[0] * x[1] + (-4 + 4 * b) * b


def goldstein_price(x):
    s = x[0] + x[1] + 1
    a = 1 + s * s * (19 - 14 * x[0] + 3 * x[0] * x[0] - 14 * x[1] + 6 * x[0] * x[1]
                     + 3 * x[1] * x[1])
    d = 2 * x[0] - 3 * x[1]
    b = 30 + d * d * (18 - 32 * x[0] + 12 * x[0] * x[0] + 48 * x[1] - 36 * x[0] * x[1]
                      + 27 * x[1] * x[1])
    return a * b


HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]
HARTMANN3_A = [[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]]
HARTMANN3_P = [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
HARTMANN6_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
               [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
HARTMANN6_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
               [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]


def _hartmann(x, a, p):
    total = 0.0
    for i in range(4):
        inner = 0.0
        for j in range(len(x)):
            d = x[j] - p[i][j] * 1e-4
            inner += a[i][j] * d * d
        total += HARTMANN_ALPHA[i] * math.exp(-inner)
    return -total


def hartmann3(x):
    return _hartmann(x, HARTMANN3_A, HARTMANN3_P)


def hartmann6(x):
    return _hartmann(x, HARTMANN6_A, HARTMANN6_P)


def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        a, b = x[i + 1] - x[i] * x[i], x[i] - 1
        total += 100 * a * a + b * b
    return total


def levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    s0 = math.sin(PI * w[0])
    total = s0 * s0
    for i in range(len(x) - 1):
        s = math.sin(PI * w[i] + 1)
        total += (w[i] - 1) * (w[i] - 1) * (1 + 10 * s * s)
    sd = math.sin(2 * PI * w[-1])
    return total + (w[-1] - 1) * (w[-1] - 1) * (1 + sd * sd)


def ackley(x):
    squares = sum(v * v for v in x)
    cosines = sum(math.cos(2 * PI * v) for v in x)
    n = len(x)
    return -20 * math.exp(-0.2 * math.sqrt(squares / n)) - math.exp(cosines / n) + 20 + math.e


STYBLINSKI_TANG_ARGMIN = -2.9035340276126953
STYBLINSKI_TANG_MIN = -39.16616570377142


def styblinski_tang(x):
    return sum(v * v * v * v - 16 * v * v + 5 * v for v in x) / 2


def rastrigin(x):
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * PI * v) for v in x)


def beale(x):
    a = 1.5 - x[0] + x[0] * x[1]
    b = 2.25 - x[0] + x[0] * x[1] * x[1]
    c = 2.625 - x[0] + x[0] * x[1] * x[1] * x[1]
    return a * a + b * b + c * c


SHEKEL_C = [0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5]
SHEKEL_A = [[4, 4, 4, 4], [1, 1, 1, 1], [8, 8, 8, 8], [6, 6, 6, 6], [3, 7, 3, 7],
            [2, 9, 2, 9], [5, 5, 3, 3], [8, 1, 8, 1], [6, 2, 6, 2], [7, 3.6, 7, 3.6]]


def shekel(x):
    total = 0.0
    for i in range(10):
        inner = SHEKEL_C[i]
        for j in range(4):
            d = x[j] - SHEKEL_A[i][j]
            inner += d * d
        total += 1 / inner
    return -total


def michalewicz(x):
    total = 0.0
    for i, v in enumerate(x):
        s = math.sin((i + 1) * v * v / PI)
        s2 = s * s
        s4 = s2 * s2
        s8 = s4 * s4
        s16 = s8 * s8
        total += math.sin(v) * s16 * s4
    return -total


def dixon_price(x):
    total = (x[0] - 1) * (x[0] - 1)
    for i in range(1, len(x)):
        t = 2 * x[i] * x[i] - x[i - 1]
        total += (i + 1) * t * t
    return total


SCHWEFEL_ARGMIN = 420.96874657644923
SCHWEFEL_CONSTANT = 418.9828872724338


def schwefel(x):
    total = SCHWEFEL_CONSTANT * len(x)
    for v in x:
        total -= v * math.sin(math.sqrt(abs(v)))
    return total


def box(d, low, high):
    return [(low, high)] * d


# name -> (bounds, f*, argmin, function), in tune_functions.h's order.
FUNCTIONS = {
    "branin": ([(-5, 10), (0, 15)], 0.39788735772973816, [PI, 2.275], branin),
    "six-hump-camel": ([(-3, 3), (-2, 2)], -1.0316284534898774,
                       [0.08984201368301331, -0.7126564032704135], six_hump_camel),
    "goldstein-price": (box(2, -2, 2), 3.0, [0, -1], goldstein_price),
    "hartmann3": (box(3, 0, 1), -3.862779787332663, [0.11458922, 0.55564884, 0.85254695],
                  hartmann3),
    "hartmann6": (box(6, 0, 1), -3.322368011415515,
                  [0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054],
                  hartmann6),
    "rosenbrock4": (box(4, -5, 10), 0.0, [1] * 4, rosenbrock),
    "levy4": (box(4, -10, 10), 0.0, [1] * 4, levy),
    "ackley5": (box(5, -32.768, 32.768), 0.0, [0] * 5, ackley),
    "styblinski-tang4": (box(4, -5, 5), 4 * STYBLINSKI_TANG_MIN, [STYBLINSKI_TANG_ARGMIN] * 4,
                         styblinski_tang),
    "rastrigin4": (box(4, -5.12, 5.12), 0.0, [0] * 4, rastrigin),
    # Held out (tune_functions.h says why).
    "beale": (box(2, -4.5, 4.5), 0.0, [3, 0.5], beale),
    "shekel4": (box(4, 0, 10), -10.536409816692048,
                [4.0007465317567625, 4.000592934739593, 3.9996633965681863, 3.999509799343735],
                shekel),
    "michalewicz5": (box(5, 0, PI), -4.687658179088149,
                     [2.2029055197344682, 1.5707963293125675, 1.2849915708780884,
                      1.9230584691306654, 1.7204697710078967], michalewicz),
    "dixon-price4": (box(4, -10, 10), 0.0,
                     [1.0, 0.7071067811865476, 0.5946035575013605, 0.5452538663326288],
                     dixon_price),
    "schwefel4": (box(4, -500, 500), 0.0, [SCHWEFEL_ARGMIN] * 4, schwefel),
}

# ---------------------------------------------------------------------------


def quantile(values, q):
    """Linear interpolation between order statistics (numpy's default)."""
    v = sorted(values)
    if not v:
        return float("nan")
    h = (len(v) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def make_sampler(name, seed):
    import optuna
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "multivariate-tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed)
    raise SystemExit(f"unknown sampler {name!r}: want tpe, multivariate-tpe, random or cmaes")


def run_quality(args, out):
    import optuna
    budgets = sorted(args.budgets)
    horizon = budgets[-1]
    print(f"Quality: best-found regret, median [q25, q75] over {args.seeds} seeds, "
          f"budgets {budgets}", flush=True)
    for sampler_name in args.samplers:
        for fname in args.functions:
            bounds, fstar, _, f = FUNCTIONS[fname]
            names = [f"x{i}" for i in range(len(bounds))]
            per_budget = {b: [] for b in budgets}
            started = time.perf_counter()
            for seed in range(args.seeds):
                study = optuna.create_study(sampler=make_sampler(sampler_name, seed),
                                            direction="minimize")

                def objective(trial):
                    x = [trial.suggest_float(n, lo, hi) for n, (lo, hi) in zip(names, bounds)]
                    return f(x)

                study.optimize(objective, n_trials=horizon)
                values = [t.value for t in study.trials]  # in creation order
                for b in budgets:
                    per_budget[b].append(min(values[:b]) - fstar)
            seconds = time.perf_counter() - started
            for b in budgets:
                r = per_budget[b]
                row = {"sampler": sampler_name, "function": fname, "budget": b, "regrets": r,
                       "median": quantile(r, 0.5), "q25": quantile(r, 0.25),
                       "q75": quantile(r, 0.75)}
                out["quality"].append(row)
                print(f"  {sampler_name:<17} {fname:<17} {b:>4}  {row['median']:<11.4g} "
                      f"[{row['q25']:.4g}, {row['q75']:.4g}]", flush=True)
            print(f"  ({sampler_name} on {fname}: {seconds:.1f} s for {args.seeds} runs)",
                  flush=True)


def run_timing(args, out):
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.trial import TrialState, create_trial
    print("Timing: study.ask(fixed_distributions) with every parameter suggested, "
          "on a history of N completed random trials (median over repeats)", flush=True)
    print(f"  {'sampler':<17} {'dim':>3} {'history':>7} {'median ms':>10} {'repeats':>7}")
    for sampler_name in args.samplers:
        for dim in args.timing_dims:
            dists = {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(dim)}
            for history in args.histories:
                rng = random.Random(1000 * dim + history)
                study = optuna.create_study(sampler=make_sampler(sampler_name, 0),
                                            direction="minimize")
                trials = []
                for _ in range(history):
                    params = {k: rng.random() for k in dists}
                    value = sum((v - 0.3) ** 2 for v in params.values())
                    trials.append(create_trial(params=params, distributions=dists, value=value))
                study.add_trials(trials)
                times = []
                spent = 0.0
                while len(times) < args.max_repeats and (len(times) < 3 or spent < 2.0):
                    t0 = time.perf_counter()
                    trial = study.ask(fixed_distributions=dists)
                    t1 = time.perf_counter()
                    # Failed trials are never read by these samplers: the history
                    # stays at N completed trials.
                    study.tell(trial, state=TrialState.FAIL)
                    times.append((t1 - t0) * 1e3)
                    spent += t1 - t0
                row = {"sampler": sampler_name, "dim": dim, "history": history,
                       "median_ms": statistics.median(times), "repeats": len(times)}
                out["timing"].append(row)
                print(f"  {sampler_name:<17} {dim:>3} {history:>7} {row['median_ms']:>10.3f} "
                      f"{len(times):>7}", flush=True)


def evaluate(points_file):
    """The suite as defined here, and the functions' values at the points
    tune_bench --mode eval wrote (for compare_tuning.py's check)."""
    with open(points_file) as fh:
        data = json.load(fh)
    functions = [{"name": name, "bounds": [list(b) for b in bounds], "optimum": fstar,
                  "argmin": argmin}
                 for name, (bounds, fstar, argmin, _) in FUNCTIONS.items()]
    values = [{"function": e["function"], "x": e["x"],
               "value": FUNCTIONS[e["function"]][3](e["x"]) if e["function"] in FUNCTIONS
               else None}
              for e in data["points"]]
    return {"functions": functions, "values": values}


def int_list(text):
    return [int(v) for v in text.split(",") if v]


def str_list(text):
    return [v for v in text.split(",") if v]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["quality", "timing", "all"], default="all")
    p.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 (default 20)")
    p.add_argument("--budgets", type=int_list, default=[50, 100])
    p.add_argument("--functions", type=str_list, default=list(FUNCTIONS))
    p.add_argument("--samplers", type=str_list, default=["tpe"],
                   help="comma-separated: tpe, multivariate-tpe, random, cmaes (default tpe)")
    p.add_argument("--timing-samplers", type=str_list, default=None,
                   help="samplers for the timing mode (default: --samplers)")
    p.add_argument("--timing-dims", type=int_list, default=[4, 8])
    p.add_argument("--histories", type=int_list, default=[100, 1000])
    p.add_argument("--max-repeats", type=int, default=15)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--eval", metavar="POINTS_JSON",
                   help="print the functions' values at these points as JSON and exit")
    args = p.parse_args()

    if args.eval:
        json.dump(evaluate(args.eval), sys.stdout)
        return
    for name in args.functions:
        if name not in FUNCTIONS:
            raise SystemExit(f"unknown function {name!r}: want one of {', '.join(FUNCTIONS)}")

    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    out = {"meta": {"optuna": optuna.__version__, "python": sys.version.split()[0],
                    "seeds": args.seeds, "budgets": sorted(args.budgets),
                    "functions": args.functions, "samplers": args.samplers},
           "quality": [], "timing": []}
    if args.mode in ("quality", "all"):
        run_quality(args, out)
    if args.mode in ("timing", "all"):
        samplers = args.samplers
        args.samplers = args.timing_samplers or samplers
        run_timing(args, out)
        args.samplers = samplers
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
