#include "controller/trial_dir.h"

#include <fmt/format.h>

#include <filesystem>

#include "api/object.h"
#include "tune/sampler.h"

namespace trainyard::controller {

namespace fs = std::filesystem;

std::string ExperimentTrialDirs(const std::string& root, const std::string& namespace_,
                                const std::string& experiment) {
  return fmt::format("{}/{}/{}", root, namespace_, experiment);
}

std::optional<TrialDir> TrialDirOf(const api::Experiment& experiment, const api::Trial& trial,
                                   const std::string& root) {
  if (!experiment.spec.algorithm) return std::nullopt;
  std::string mount_path;
  for (const api::AlgorithmSetting& s : experiment.spec.algorithm->algorithm_settings) {
    if (s.name == tune::kTrialDirSetting && !s.value.empty()) mount_path = s.value;
  }
  if (mount_path.empty()) return std::nullopt;
  std::string dirs =
      ExperimentTrialDirs(root, experiment.metadata.namespace_, experiment.metadata.name);
  TrialDir dir{.mount_path = mount_path, .host_path = dirs + "/" + trial.metadata.name};
  auto parent = trial.spec.labels.find(std::string(tune::kPbtParentLabel));
  if (parent != trial.spec.labels.end() && !parent->second.empty()) {
    dir.parent_path = dirs + "/" + parent->second;
  }
  return dir;
}

Status PrepareTrialDir(const TrialDir& dir, bool* parent_missing) {
  *parent_missing = false;
  std::error_code ec;
  if (fs::is_directory(dir.host_path, ec)) return OkStatus();
  fs::path target(dir.host_path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return UnavailableError(
        fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message()));
  }
  if (dir.parent_path.empty() || !fs::is_directory(dir.parent_path, ec)) {
    *parent_missing = !dir.parent_path.empty();
    fs::create_directory(target, ec);
    if (ec)
      return UnavailableError(fmt::format("cannot create {}: {}", dir.host_path, ec.message()));
    return OkStatus();
  }
  fs::path partial = target.string() + ".copying";
  fs::remove_all(partial, ec);
  fs::copy(dir.parent_path, partial, fs::copy_options::recursive | fs::copy_options::copy_symlinks,
           ec);
  if (!ec) fs::rename(partial, target, ec);
  if (ec) {
    return UnavailableError(fmt::format("cannot copy the parent's directory {} to {}: {}",
                                        dir.parent_path, dir.host_path, ec.message()));
  }
  return OkStatus();
}

}  // namespace trainyard::controller
