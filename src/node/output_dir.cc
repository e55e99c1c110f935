#include "node/output_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "api/tracking.h"
#include "common/artifact_files.h"
#include "node/run_as.h"

namespace trainyard::node {

Result<Mount> PrepareOutputDir(const std::string& root, const std::string& namespace_,
                               const api::TrackedOwner& owner,
                               const std::optional<runtime::Credentials>& user) {
  const std::string& owner_uid = owner.uid;
  if (!api::IsArtifactsFolderName(owner_uid)) {
    return InvalidArgumentError(fmt::format("uid {:?} names no folder", owner_uid));
  }
  std::string dir = api::ArtifactsDirOf(root, namespace_, owner_uid);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return UnavailableError(
        fmt::format("cannot make the job's output folder {}: {}", dir, ec.message()));
  }
  // Its replicas' alone: the folders above may be passed through, never
  // listed (GiveOutputDir opens the way for another user).
  namespace fs = std::filesystem;
  fs::permissions(dir, fs::perms::owner_all, ec);
  for (const fs::path& above : {fs::path(root), fs::path(root) / namespace_}) {
    fs::permissions(above, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                    ec);
  }
  if (!ReadArtifactOwner(dir)) {
    RETURN_IF_ERROR(WriteArtifactOwner(
        dir, {.kind = owner.kind, .name = owner.name, .uid = owner.uid, .deleted = std::nullopt}));
  }
  if (user) RETURN_IF_ERROR(GiveOutputDir(root, dir, *user));
  return Mount{.mount_path = dir, .host_path = dir};
}

void AddOutputDirEnv(const api::Container& container, const std::string& dir, EnvList& env) {
  bool own = std::any_of(container.env.begin(), container.env.end(),
                         [](const api::EnvVar& v) { return v.name == api::kOutputDirEnv; });
  if (own) return;
  // Trainyard's own environment may hold one (a run inside a replica):
  // the replica's job is another.
  std::erase_if(env, [](const auto& e) { return e.first == api::kOutputDirEnv; });
  env.emplace_back(api::kOutputDirEnv, dir);
}

}  // namespace trainyard::node
