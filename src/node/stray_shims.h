// Shims that an earlier trainyard started and that still run, found in
// /proc: after a crash, some may run for a pod whose start (or whose very
// existence) the store never recorded. The node agent adopts those of
// stored pods and stops the others.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trainyard::node {

struct ShimProcess {
  pid_t pid = 0;
  uint64_t start_time = 0;  // as Process::Adopt checks it
  std::string exit_path;    // the shim's argv[1]
};

// Every running trainyard-shim that leads its own process group (a
// replica, forked from it, shares its command line only until it execs)
// and whose exit file lies under `dir` (an absolute path).
std::vector<ShimProcess> FindShims(const std::string& dir);

}  // namespace trainyard::node
