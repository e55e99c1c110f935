#!/usr/bin/python3
"""The shape limits of docs/architecture.md, measured over src/ and bench/.

  scripts/shape.py          the figures, and what is over a limit
  scripts/shape.py --list   also every kind-name comparison counted

The limits: no source file over 700 lines, no function over 80, and at most
20 comparisons against kind names outside the registry and the tests (what
a kind does belongs to its descriptor, not to if-chains on its name).
Exits 1 when a limit is passed.
"""
import os
import re
import sys

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80
MAX_KIND_COMPARISONS = 20

# Every kind trainyard serves or makes, and the constants that spell them.
KINDS = ("PyTorchJob TFJob XGBoostJob MPIJob PaddleJob JAXJob TrainJob JobSet "
         "Experiment Trial Suggestion Job Pod PodGroup Workload TrainingRuntime "
         "ClusterTrainingRuntime Service ConfigMap Secret Node Event Lease Namespace "
         "ClusterQueue LocalQueue ResourceFlavor PriorityClass ResourceQuota "
         "CustomResourceDefinition PersistentVolumeClaim Deployment ServiceAccount "
         "MutatingWebhookConfiguration ValidatingWebhookConfiguration "
         "OptimizationJob").split()
NAME = r'"(?:%s)"' % "|".join(KINDS)
# kPodGroupKind, kTrackingRunKind; JobKind::kMPIJob, PolicyKind::kPriorityClass.
CONSTANT = r"(?:\bk\w+Kind\b|\b(?:JobKind|PolicyKind)::k\w+)"
OPERAND = r"(?:%s|%s)" % (NAME, CONSTANT)
COMPARISON = re.compile(r"(?:==|!=)\s*(?:api::)?%s|%s\s*(?:==|!=)" % (OPERAND, OPERAND))
# Where kinds are registered: the descriptors, and each kind's own table.
REGISTRY = re.compile(r"src/api/(registry|kinds|job_shapes|api_strategies)[^/]*\.cc$")


def sources(roots):
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in sorted(files):
                if name.endswith((".cc", ".h")):
                    yield os.path.join(directory, name)


def functions(lines):
    """(first line, length, signature) of each function body that opens at
    the top level or one indent in (a class's members), by brace matching."""
    opening = re.compile(r"^( {0,2})(?![ }])(.*)\{\s*(//.*)?$")
    not_function = re.compile(
        r"^\s*(namespace|class|struct|enum|union|extern)\b|=\s*\{$|^\s*(return|if|for|while|"
        r"switch|else|do)\b|,\s*\{$")
    i = 0
    while i < len(lines):
        m = opening.match(lines[i])
        head = lines[i] if ")" in lines[i] else (lines[i - 1] if i else "")
        if m and ")" in head and not not_function.search(lines[i]):
            indent = m.group(1)
            end = i + 1
            while end < len(lines) and not re.match("^%s\\}" % indent, lines[end]):
                end += 1
            yield i + 1, end - i + 1, lines[i].strip()
            i = end
        i += 1


def main():
    listing = "--list" in sys.argv
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    long_files, long_functions, comparisons = [], [], []
    for path in sources(["src", "bench"]):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if len(lines) - 1 > MAX_FILE_LINES:
            long_files.append((len(lines) - 1, path))
        for first, length, signature in functions(lines):
            if length > MAX_FUNCTION_LINES:
                long_functions.append((length, "%s:%d" % (path, first), signature[:70]))
        if "/tests/" in path or REGISTRY.search(path):
            continue
        for n, line in enumerate(lines, 1):
            code = line.split("//")[0]
            for _ in COMPARISON.finditer(code):
                comparisons.append("%s:%d: %s" % (path, n, line.strip()[:110]))
    print("files over %d lines: %d" % (MAX_FILE_LINES, len(long_files)))
    for n, path in sorted(long_files, reverse=True):
        print("  %5d %s" % (n, path))
    print("functions over %d lines: %d" % (MAX_FUNCTION_LINES, len(long_functions)))
    for n, where, signature in sorted(long_functions, reverse=True):
        print("  %5d %s %s" % (n, where, signature))
    print("kind-name comparisons outside the registry and tests: %d (at most %d)" %
          (len(comparisons), MAX_KIND_COMPARISONS))
    if listing:
        for c in comparisons:
            print("  " + c)
    over = (long_files or long_functions or len(comparisons) > MAX_KIND_COMPARISONS)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
