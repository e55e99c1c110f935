// What this machine offers replicas: CPUs (those this process may run on),
// physical memory, and the NVIDIA GPUs nvidia-smi lists (none when it is
// absent or fails, which is said in `gpu_note`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainyard::runtime {

struct Gpu {
  std::string index;  // as CUDA_VISIBLE_DEVICES names it
  std::string uuid;
  std::string name;
};

struct MachineFacts {
  int64_t cpus = 1;
  int64_t memory_bytes = 0;
  std::vector<Gpu> gpus;
  std::string gpu_note;  // why no GPUs were found, when nvidia-smi was there but failed
};

// `path_env` is the PATH nvidia-smi is looked up in.
MachineFacts DiscoverMachine(const std::string& path_env);

// nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader output.
std::vector<Gpu> ParseNvidiaSmi(const std::string& csv);

}  // namespace trainyard::runtime
