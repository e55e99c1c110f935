#!/usr/bin/python3
"""trainyard's samplers against Optuna on closed-form functions: the table for
docs/benchmarks.md.

  1. Checks that bench/tune_functions.h and bench/optuna_anchor.py define the
     same suite: names, bounds, f*, argmin, and values at fixed points
     (tune_bench --mode eval against optuna_anchor.py --eval).
  2. Runs tune_bench (quality and timing) and optuna_anchor.py with the same
     seeds, budgets and functions, or reads their JSON from earlier runs.
  3. Prints markdown: median best-found regret per function and budget,
     Optuna's default TPE against each trainyard sampler, the winner marked;
     on how many functions trainyard's best sampler beats Optuna's TPE (the
     target is at least 80 %); and the time per suggestion at 100 and 1,000
     trials.

Run from the repository root, with a Release build:
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build build-release --target tune_bench
  /usr/bin/python3 bench/compare_tuning.py --tune-bench build-release/bench/tune_bench \\
      --out build-release/tuning/benchmarks.md

--trainyard-json / --optuna-json reuse results from earlier runs (the files
--save-dir keeps); the consistency check always runs.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

# The same order statistic the anchor reports with; optuna_anchor imports
# optuna only inside its samplers, so this import needs no Optuna.
from optuna_anchor import quantile

OPTUNA_LABELS = {"tpe": "Optuna TPE (default)", "multivariate-tpe": "Optuna mv-TPE",
                 "random": "Optuna random", "cmaes": "Optuna CMA-ES"}
TARGET_WIN_SHARE = 0.8
TARGET_MS = 1.0


def mann_whitney_less(a, b):
    """One-sided p-value that values in `a` tend to be smaller than in `b`
    (Mann-Whitney U, normal approximation with tie correction)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return float("nan")
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    tie_term = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    mean = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 0.5
    z = (u1 - mean + 0.5) / math.sqrt(var)  # continuity correction
    return 0.5 * math.erfc(-z / math.sqrt(2))


def fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-3:
        return f"{v:.2e}"
    return f"{v:.3g}"


def fmt_ms(v):
    return "–" if v is None else f"{v:.3g}"


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd):
    progress("$ " + " ".join(cmd))
    # The runs' own tables go to stderr, so stdout carries only the markdown.
    proc = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} exited with {proc.returncode}")


# ---------------------------------------------------------------------------
# 1. The suite is the same on both sides.

def check_consistency(args):
    with tempfile.TemporaryDirectory() as tmp:
        points_file = os.path.join(tmp, "points.json")
        run([args.tune_bench, "--mode", "eval", "--json", points_file])
        with open(points_file) as fh:
            cpp = json.load(fh)
        proc = subprocess.run([args.python, args.anchor, "--eval", points_file],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"optuna_anchor.py --eval failed:\n{proc.stderr}")
        py = json.loads(proc.stdout)
    problems = []
    cpp_functions = {f["name"]: f for f in cpp["functions"]}
    py_functions = {f["name"]: f for f in py["functions"]}
    if list(cpp_functions) != list(py_functions):
        problems.append(f"function lists differ: {list(cpp_functions)} vs {list(py_functions)}")
    for name in cpp_functions.keys() & py_functions.keys():
        c, p = cpp_functions[name], py_functions[name]
        for field in ("bounds", "optimum", "argmin"):
            if json.dumps(c[field]) != json.dumps(p[field]) and not close_nested(c[field],
                                                                                 p[field]):
                problems.append(f"{name}: {field} {c[field]} (C++) vs {p[field]} (Python)")
    worst = 0.0
    for c, p in zip(cpp["points"], py["values"]):
        if p["value"] is None:
            continue
        scale = max(1.0, abs(c["value"]))
        err = abs(c["value"] - p["value"]) / scale
        worst = max(worst, err)
        if err > 1e-12:
            problems.append(f"{c['function']} at {c['x']}: {c['value']!r} (C++) vs "
                            f"{p['value']!r} (Python)")
    if not cpp.get("meta", {}).get("checks_passed", True):
        problems.append("tune_bench --mode eval: a check failed (f at argmin is not f*)")
    if problems:
        raise SystemExit("tune_functions.h and optuna_anchor.py disagree:\n  "
                         + "\n  ".join(problems))
    progress(f"consistency: {len(cpp_functions)} functions, {len(cpp['points'])} points agree "
             f"(largest relative difference {worst:.1e})")
    return len(cpp["points"]), worst


def close_nested(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close_nested(x, y) for x, y in zip(a, b))
    return abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(a)))


# ---------------------------------------------------------------------------
# 2. Running both.

def run_both(args):
    os.makedirs(args.save_dir, exist_ok=True)
    common = ["--seeds", str(args.seeds), "--budgets", args.budgets]
    if args.functions:
        common += ["--functions", args.functions]
    ty_path = args.trainyard_json
    if not ty_path:
        ty_path = os.path.join(args.save_dir, "trainyard.json")
        run([args.tune_bench, "--mode", "all", "--algorithms", args.algorithms, "--json",
             ty_path] + common)
    op_path = args.optuna_json
    if not op_path:
        op_path = os.path.join(args.save_dir, "optuna.json")
        run([args.python, args.anchor, "--mode", "all", "--samplers", args.optuna_samplers,
             "--json", op_path] + common)
    with open(ty_path) as fh:
        ty = json.load(fh)
    with open(op_path) as fh:
        op = json.load(fh)
    return ty, op


# ---------------------------------------------------------------------------
# 3. Markdown.

def index_quality(rows, key):
    """(sampler, function, budget) -> regrets."""
    return {(r[key], r["function"], r["budget"]): r["regrets"] for r in rows}


def render(ty, op, consistency):
    out = []
    w = out.append
    tyq = index_quality(ty["quality"], "algorithm")
    opq = index_quality(op["quality"], "sampler")
    functions = list(dict.fromkeys(f for (_, f, _) in list(opq) + list(tyq)))
    budgets = sorted({b for (_, _, b) in list(opq) + list(tyq)})
    ty_algs = [a for a in dict.fromkeys(a for (a, _, _) in tyq) if a != "driver-uniform"]
    controls = [a for a in dict.fromkeys(a for (a, _, _) in tyq) if a == "driver-uniform"]
    op_samplers = list(dict.fromkeys(s for (s, _, _) in opq))
    if "tpe" not in op_samplers:
        raise SystemExit("the Optuna results have no tpe sampler: the comparison needs it")
    others = [s for s in op_samplers if s != "tpe"]
    seeds_ty, seeds_op = ty["meta"]["seeds"], op["meta"]["seeds"]

    def med(table, key):
        r = table.get(key)
        return quantile(r, 0.5) if r else None

    # The held-out functions (tune_functions.h) are reported apart: the
    # target counts the suite the samplers' defaults were chosen on.
    held_out = set(ty["meta"].get("held_out", []))
    suite = [f for f in functions if f not in held_out]
    kept_apart = [f for f in functions if f in held_out]

    # Wins against Optuna's TPE, per trainyard algorithm, budget and set.
    def count_wins(a, b, among):
        n = won = significant = 0
        for f in among:
            mine, theirs = tyq.get((a, f, b)), opq.get(("tpe", f, b))
            if not mine or not theirs:
                continue
            n += 1
            if quantile(mine, 0.5) < quantile(theirs, 0.5):
                won += 1
                if mann_whitney_less(mine, theirs) < 0.05:
                    significant += 1
        return won, significant, n

    wins = {(a, b): count_wins(a, b, suite) for a in ty_algs for b in budgets}
    wins_apart = {(a, b): count_wins(a, b, kept_apart) for a in ty_algs for b in budgets}

    def score(a):
        total = sum(wins[(a, b)][0] for b in budgets)
        ratios = [math.log(max(med(tyq, (a, f, b)), 1e-300) / max(med(opq, ("tpe", f, b)), 1e-300))
                  for f in suite for b in budgets
                  if tyq.get((a, f, b)) and opq.get(("tpe", f, b))]
        return (total, -sum(ratios) / len(ratios) if ratios else 0)

    best = max(ty_algs, key=score) if ty_algs else None

    w("## Samplers on closed-form functions: trainyard against Optuna")
    w("")
    w(f"Generated by `bench/compare_tuning.py` on {datetime.date.today().isoformat()} "
      f"({platform.machine()}, {os.cpu_count()} CPUs; Optuna {op['meta'].get('optuna')}, "
      f"Python {op['meta'].get('python')}; tune_bench build: {ty['meta'].get('build')}).")
    w("")
    w(f"Each sampler minimises each function sequentially (ask one point, evaluate, tell) "
      f"from seeds 0..{seeds_ty - 1} (trainyard: `random_state`) and 0..{seeds_op - 1} "
      f"(Optuna: `seed=`); a cell is the median over the seeds of the best-found regret, "
      f"best f − f*, after the budget's trials. Lower is better; the lowest median in a row is "
      f"**bold**. The functions (bounds, f*) are in `bench/tune_functions.h`; "
      f"`bench/optuna_anchor.py` defines the same ones, and the two were checked to agree at "
      f"{consistency[0]} fixed points (largest relative difference {consistency[1]:.1e}). "
      f"Optuna's default sampler is `TPESampler(seed=s)` with every other argument at its "
      f"default (10 random startup trials, univariate).")
    w("")
    for b in budgets:
        cols = (["tpe"] + others, ty_algs + controls)
        header = ([OPTUNA_LABELS.get(s, "Optuna " + s) for s in cols[0]]
                  + [f"trainyard {a}" for a in cols[1]])
        w(f"### Median best-found regret after {b} trials")
        w("")
        w("| function | " + " | ".join(header) + (f" | {best} beats Optuna TPE |" if best
                                                     else " |"))
        w("|---|" + "---:|" * len(header) + (":---:|" if best else ""))
        for f in functions:
            cells = [med(opq, (s, f, b)) for s in cols[0]] + [med(tyq, (a, f, b))
                                                              for a in cols[1]]
            present = [c for c in cells if c is not None]
            low = min(present) if present else None
            text = [(f"**{fmt(c)}**" if c is not None and c == low else fmt(c)) for c in cells]
            mark = ""
            if best:
                mine, theirs = med(tyq, (best, f, b)), med(opq, ("tpe", f, b))
                if mine is None or theirs is None:
                    mark = " – |"
                else:
                    p = mann_whitney_less(tyq[(best, f, b)], opq[("tpe", f, b)])
                    mark = (f" yes (p={p:.2g}) |" if mine < theirs else " no |")
            name = f"{f} (held out)" if f in held_out else f
            w(f"| {name} | " + " | ".join(text) + " |" + mark)
        w("")
    w("Interquartile ranges, and each seed's regret, are in the JSON files the runs write.")
    w("")

    w("### Functions on which each trainyard sampler beats Optuna's default TPE")
    w("")
    w("A win is a lower median regret; in brackets, the wins where a one-sided Mann–Whitney U "
      "test over the seeds gives p < 0.05.")
    w("")
    apart_heads = [f"{b} trials, held out" for b in budgets] if kept_apart else []
    w("| trainyard sampler | " + " | ".join([f"{b} trials" for b in budgets] + apart_heads)
      + " |")
    w("|---|" + "---:|" * (len(budgets) + len(apart_heads)))
    if not ty_algs:
        w("| (none ran) | " + " | ".join("–" for _ in budgets + apart_heads) + " |")
    for a in ty_algs:
        cells = []
        for table in ([wins, wins_apart] if kept_apart else [wins]):
            for b in budgets:
                won, sig, n = table[(a, b)]
                cells.append(f"{won}/{n} ({sig})")
        w(f"| {'**' + a + '**' if a == best else a} | " + " | ".join(cells) + " |")
    w("")
    if best:
        parts, met = [], True
        for b in budgets:
            won, _, n = wins[(best, b)]
            share = won / n if n else 0
            met = met and share >= TARGET_WIN_SHARE
            parts.append(f"{won}/{n} functions ({share:.0%}) at {b} trials")
        w(f"**Target (trainyard's best sampler beats Optuna's default TPE on ≥ 80 % of the "
          f"functions): {'met' if met else 'NOT met'}.** The best sampler, `{best}`, wins on "
          + "; ".join(parts) + ".")
        if kept_apart:
            apart = [f"{wins_apart[(best, b)][0]}/{wins_apart[(best, b)][2]} at {b} trials"
                     for b in budgets]
            w("")
            w(f"On the {len(kept_apart)} held-out functions ({', '.join(kept_apart)}), which "
              f"no default was chosen on, `{best}` beats Optuna's default TPE on "
              + "; ".join(apart) + ".")
        oracle = []
        for b in budgets:
            n = won = 0
            for f in suite:
                theirs = med(opq, ("tpe", f, b))
                mine = [med(tyq, (a, f, b)) for a in ty_algs if tyq.get((a, f, b))]
                if theirs is None or not mine:
                    continue
                n += 1
                won += min(mine) < theirs
            oracle.append(f"{won}/{n} at {b} trials")
        if len(ty_algs) > 1:
            w("")
            w("For comparison only (the target asks for one sampler): picking trainyard's better "
              "sampler per function afterwards beats Optuna's TPE on " + "; ".join(oracle) + ".")
    else:
        w("**Target: not measurable: no trainyard sampler ran.**")
    skipped = {s["algorithm"]: s["reason"] for s in ty.get("skipped", [])
               if "function" not in s and "timing" not in s}
    if skipped:
        w("")
        w("Not run (MakeSampler failed): " + "; ".join(f"`{a}` ({r})" for a, r in
                                                        skipped.items()) + ".")
    partial = [s for s in ty.get("skipped", []) if "function" in s]
    if partial:
        w("")
        w("Runs that failed part-way: " + "; ".join(
            f"`{s['algorithm']}` on {s['function']} ({s['reason']})" for s in partial) + ".")
    w("")

    w("### Time per suggestion")
    w("")
    w("One suggestion on a history of N completed trials at uniformly random points of "
      "[0, 1]^d, median over repeats. Optuna: `study.ask()` with every parameter's "
      "distribution fixed, so the sampling happens inside the call (in-memory storage). "
      "trainyard: one `Sampler::Suggest(trials, 1)` in-process; *cold* on a sampler built just "
      "before, *warm* (in brackets) on the sampler that has just answered for the first N−1 "
      f"trials. Target: under {TARGET_MS:g} ms at 1,000 trials.")
    w("")
    histories = sorted({t["history"] for t in op["timing"]} | {t["history"] for t in
                                                                 ty["timing"]})
    w("| sampler | d | " + " | ".join(f"ms @ {h:,}" for h in histories) + " | < 1 ms @ 1,000 |")
    w("|---|---:|" + "---:|" * len(histories) + ":---:|")
    op_t = {(t["sampler"], t["dim"], t["history"]): t for t in op["timing"]}
    ty_t = {(t["algorithm"], t["dim"], t["history"]): t for t in ty["timing"]}
    dims = sorted({k[1] for k in list(op_t) + list(ty_t)})
    for s in op_samplers:
        for d in dims:
            cells = [fmt_ms(op_t[(s, d, h)]["median_ms"]) if (s, d, h) in op_t else "–"
                     for h in histories]
            at = op_t.get((s, d, 1000))
            ok = "–" if not at else ("yes" if at["median_ms"] < TARGET_MS else "no")
            w(f"| {OPTUNA_LABELS.get(s, 'Optuna ' + s)} | {d} | " + " | ".join(cells)
              + f" | {ok} |")
    for a in ty_algs + controls:
        for d in dims:
            cells = [(f"{fmt_ms(ty_t[(a, d, h)]['cold_ms'])} ({fmt_ms(ty_t[(a, d, h)]['warm_ms'])})"
                      if (a, d, h) in ty_t else "–") for h in histories]
            at = ty_t.get((a, d, 1000))
            ok = "–" if not at else ("yes" if at["cold_ms"] < TARGET_MS else
                                     ("warm only" if at["warm_ms"] < TARGET_MS else "no"))
            w(f"| trainyard {a} | {d} | " + " | ".join(cells) + f" | {ok} |")
    w("")
    if "cmaes" in op_samplers:
        w("Optuna CMA-ES's time is on a history its own generations did not produce; it "
          "reads only the trials of its current generation, so the figure is its overhead "
          "with few trials to read.")
        w("")
    if controls:
        w("`driver-uniform` is the driver's own i.i.d. uniform sampler, a control for the "
          "harness (compare it with Optuna random), not a trainyard sampler.")
        w("")
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tune-bench", default="build-release/bench/tune_bench",
                   help="the tune_bench binary (a Release build)")
    p.add_argument("--anchor", default=os.path.join(here, "optuna_anchor.py"))
    p.add_argument("--python", default="/usr/bin/python3",
                   help="the interpreter with Debian's python3-optuna")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--budgets", default="50,100")
    p.add_argument("--functions", default="", help="comma-separated (default: all)")
    p.add_argument("--algorithms",
                   default="random,sobol,tpe,multivariate-tpe,bayesianoptimization,cmaes",
                   help="trainyard algorithms for tune_bench")
    p.add_argument("--optuna-samplers", default="tpe,multivariate-tpe,random,cmaes")
    p.add_argument("--trainyard-json", help="reuse tune_bench's JSON instead of running it")
    p.add_argument("--optuna-json", help="reuse optuna_anchor.py's JSON instead of running it")
    p.add_argument("--save-dir",
                   help="where the runs' JSON goes (default: tuning/ in tune_bench's build "
                        "directory)")
    p.add_argument("--out", help="also write the markdown here")
    args = p.parse_args()

    if not args.save_dir:
        args.save_dir = os.path.join(os.path.dirname(os.path.abspath(args.tune_bench)), "..",
                                     "tuning")
    consistency = check_consistency(args)
    ty, op = run_both(args)
    if not ty["meta"].get("checks_passed", True):
        progress("warning: tune_bench reported a failed check (see its output)")
    markdown = render(ty, op, consistency)
    print(markdown)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as fh:
            fh.write(markdown + "\n")


if __name__ == "__main__":
    main()
