#include "runtime/local/machine.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "runtime/local/process.h"

namespace trainyard::runtime {
namespace {

std::string Trim(std::string s) {
  size_t start = s.find_first_not_of(" \t\r");
  size_t end = s.find_last_not_of(" \t\r");
  return start == std::string::npos ? "" : s.substr(start, end - start + 1);
}

int64_t UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace

std::vector<Gpu> ParseNvidiaSmi(const std::string& csv) {
  std::vector<Gpu> gpus;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(Trim(cell));
    if (fields.size() < 2 || fields[0].empty() ||
        fields[0].find_first_not_of("0123456789") != std::string::npos) {
      continue;  // a warning or a blank line, not a GPU
    }
    gpus.push_back({fields[0], fields[1], fields.size() > 2 ? fields[2] : ""});
  }
  return gpus;
}

MachineFacts DiscoverMachine(const std::string& path_env) {
  MachineFacts facts;
  facts.cpus = UsableCpus();
  facts.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  Result<std::string> smi = ResolveProgram("nvidia-smi", path_env);
  if (!smi.ok()) return facts;  // no NVIDIA driver: no GPUs, nothing to say
  char out_path[] = "/tmp/trainyard-nvidia-smi-XXXXXX";
  int fd = mkstemp(out_path);
  if (fd < 0) return facts;
  close(fd);
  Result<Process> process =
      Process::Start({.argv = {*smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"},
                      .env = {{"PATH", path_env}},
                      .log_path = out_path});
  std::optional<ExitStatus> status;
  if (process.ok()) status = process->WaitFor(std::chrono::seconds(10));
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(out_path);
  if (!status || !status->ok()) {
    facts.gpu_note = "nvidia-smi failed, so no GPUs are offered: " + Trim(text.str());
    return facts;
  }
  facts.gpus = ParseNvidiaSmi(text.str());
  return facts;
}

}  // namespace trainyard::runtime
