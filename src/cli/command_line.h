// The command line: each command adds itself, its flags and what it runs
// to the application (CLI11 subcommands whose callback sets the exit
// code), so that main only lists them.
#pragma once

#include <CLI/CLI.hpp>

namespace trainyard::cli {

// Help that two commands share.
inline constexpr const char* kNoSandboxHelp =
    "Run replicas without a sandbox of their own (bubblewrap): volumes reached through path "
    "rewriting instead of at their mountPath, and the machine's host name";
inline constexpr const char* kRootHelp =
    "Where replicas' files are: image (the container's image, pulled into <home>/images as its "
    "imagePullPolicy says; needs root and bubblewrap), except in pods annotated "
    "trainyard.dev/root: host, which run on this machine's files; image-only (such pods are "
    "refused); host (every pod on this machine's files: a container's command runs its "
    "programs)";
inline constexpr const char* kPodMaxPidsHelp =
    "The processes and threads one pod may have at once, as the kubelet's --pod-max-pids "
    "(default: an eighth of kernel.pid_max, at most 16384; -1: no bound)";

struct ImageFlags;
// --image-gc-high-threshold, --image-gc-low-threshold and
// --image-minimum-gc-age, as the kubelet's, and --cdi-spec-dir, for run and
// server.
void AddImageFlags(CLI::App& command, ImageFlags& flags);

// What runs on this machine: validate, run, exec, initialize, images.
void AddValidateCommand(CLI::App& app, int& exit_code);
void AddRunCommand(CLI::App& app, int& exit_code);
void AddExecCommand(CLI::App& app, int& exit_code);
void AddInitializeCommand(CLI::App& app, int& exit_code);
void AddImagesCommand(CLI::App& app, int& exit_code);

// What keeps running: server, operator; and the operator's manifests.
void AddServerCommand(CLI::App& app, int& exit_code);
void AddOperatorCommand(CLI::App& app, int& exit_code);
void AddManifestsCommand(CLI::App& app, int& exit_code);

// The client verbs, for a running server (or a finished run's folder):
// apply, get, describe, logs, metrics, artifacts, delete, suspend, resume,
// events.
void AddClientCommands(CLI::App& app, int& exit_code);

}  // namespace trainyard::cli
