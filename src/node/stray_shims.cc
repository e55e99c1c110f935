#include "node/stray_shims.h"

#include <filesystem>
#include <fstream>

#include "runtime/local/process.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CommandLine(const fs::path& proc_dir) {
  std::ifstream in(proc_dir / "cmdline");
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

}  // namespace

std::vector<ShimProcess> FindShims(const std::string& dir) {
  std::string prefix = dir.ends_with('/') ? dir : dir + "/";
  std::vector<ShimProcess> shims;
  std::error_code ec;  // processes come and go while this looks
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::vector<std::string> argv = CommandLine(it->path());
    // trainyard-shim [--as=...] [--sandboxed] EXIT_FILE PROGRAM ARGV0 [ARG...]
    while (argv.size() > 1 && argv[1].starts_with("--")) argv.erase(argv.begin() + 1);
    if (argv.size() < 4 || fs::path(argv[0]).filename() != "trainyard-shim" ||
        !argv[1].starts_with(prefix)) {
      continue;
    }
    auto pid = static_cast<pid_t>(std::stol(name));
    std::optional<runtime::ProcStat> stat = runtime::ReadProcStat(pid);
    // Running, and leading its own group as a shim does.
    if (!stat || !stat->running() || stat->pgrp != pid) continue;
    shims.push_back({.pid = pid, .start_time = stat->start_time, .exit_path = argv[1]});
  }
  return shims;
}

}  // namespace trainyard::node
