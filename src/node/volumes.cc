#include "node/volumes.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "api/json.h"
#include "api/names.h"
#include "common/strings.h"
#include "node/object_keys.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

Status MakeDirectory(const fs::path& dir, const std::string& volume) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return FailedPreconditionError(
        fmt::format("volume {}: cannot create {}: {}", volume, dir.string(), ec.message()));
  }
  return OkStatus();
}

// hostPath's type, checked as the kubelet checks it.
Status PrepareHostPath(const api::Volume& volume) {
  const api::HostPathVolumeSource& source = *volume.host_path;
  fs::path path = source.path;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  bool exists = fs::exists(status);
  if (source.type == "DirectoryOrCreate") return MakeDirectory(path, volume.name);
  if (source.type == "FileOrCreate" && !exists) {
    RETURN_IF_ERROR(MakeDirectory(path.parent_path(), volume.name));
    std::ofstream touch(path, std::ios::app);
    if (!touch) {
      return FailedPreconditionError(
          fmt::format("volume {}: cannot create file {}", volume.name, source.path));
    }
    return OkStatus();
  }
  auto want = [&](bool ok, const char* what) -> Status {
    if (ok) return OkStatus();
    return FailedPreconditionError(
        fmt::format("volume {}: hostPath {} is not {}; create it or "
                    "set type: DirectoryOrCreate",
                    volume.name, source.path, what));
  };
  if (source.type == "Directory") return want(fs::is_directory(status), "a directory");
  if (source.type == "File") return want(fs::is_regular_file(status), "a file");
  if (source.type == "Socket") return want(fs::is_socket(status), "a socket");
  if (source.type == "CharDevice") return want(fs::is_character_file(status), "a char device");
  if (source.type == "BlockDevice") return want(fs::is_block_file(status), "a block device");
  return OkStatus();  // "" or unknown: no check, as the kubelet
}

// `relative` below `dir`, or an error when it would lead out of it: an
// absolute path, a ".." element, or a symlink on the way that points
// elsewhere. Validation refuses the first two at admission; this holds
// even for a pod that never went through it (the kubelet checks subPath
// again for the same reason).
Result<fs::path> PathInside(const fs::path& dir, const std::string& relative, bool file,
                            const std::string& what) {
  api::NameProblems problems = api::LocalDescendingPathProblems(relative);
  if (file && relative.empty()) problems.push_back("must not be empty");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(dir, ec);
  fs::path full = fs::weakly_canonical(dir / relative, ec);
  auto [in_base, in_full] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (problems.empty() && (ec || in_base != base.end() || (file && in_full == full.end()))) {
    problems.push_back("must stay inside the volume");
  }
  if (problems.empty()) return dir / relative;
  return FailedPreconditionError(
      fmt::format("{} \"{}\" {}; refusing to use a path outside the "
                  "volume",
                  what, relative, problems.front()));
}

// A volume's own directory is named after it: only a DNS label (as
// validation requires) can never name a path elsewhere.
Result<fs::path> VolumeDir(const std::string& root, const std::string& volume) {
  if (!api::Dns1123LabelProblems(volume).empty()) {
    return FailedPreconditionError(fmt::format(
        "volume \"{}\": the name must be a lowercase RFC 1123 label; rename the volume", volume));
  }
  return fs::path(root) / volume;
}

Status WriteFile(const fs::path& path, const std::string& content, int mode,
                 const std::string& volume) {
  RETURN_IF_ERROR(MakeDirectory(path.parent_path(), volume));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out || chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    return FailedPreconditionError(
        fmt::format("volume {}: cannot write {}", volume, path.string()));
  }
  return OkStatus();
}

// What a configMap or secret volume projects: the object's keys as files.
struct KeyFiles {
  std::string_view kind;  // "ConfigMap", "Secret"
  std::string name;
  const std::vector<api::KeyToPath>* items;
  std::optional<int32_t> default_mode;
  bool optional = false;
};

template <class Source>
KeyFiles KeyFilesOf(std::string_view kind, const std::string& name, const Source& source) {
  return {.kind = kind,
          .name = name,
          .items = &source.items,
          .default_mode = source.default_mode,
          .optional = source.optional.value_or(false)};
}

// A configMap or secret volume as files: every key, or the items listed,
// each with its mode (defaultMode, else 0644, as the kubelet). Rewritten on
// each start, so a restarted replica sees the object as it is now.
Status PrepareKeyFiles(const api::Pod& pod, const api::Volume& volume, const KeyFiles& source,
                       const fs::path& dir, const store::ObjectStore& store) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  RETURN_IF_ERROR(MakeDirectory(dir, volume.name));
  ASSIGN_OR_RETURN(auto keys, ReadObjectKeys(store, source.kind, pod.metadata.namespace_,
                                             source.name, /*binary_data=*/true));
  // Named as kubectl names them: "configmap", "secret".
  std::string kind = AsciiLower(source.kind);
  if (!keys) {
    if (source.optional) return OkStatus();
    return NotFoundError(
        fmt::format("volume {}: {} \"{}\" not found; create it (trainyard run accepts it "
                    "beside the job) or set optional: true",
                    volume.name, kind, source.name));
  }
  int default_mode = source.default_mode.value_or(0644);
  if (source.items->empty()) {
    for (const auto& [key, content] : *keys) {
      ASSIGN_OR_RETURN(fs::path path, PathInside(dir, key, /*file=*/true,
                                                 fmt::format("volume {}: key", volume.name)));
      RETURN_IF_ERROR(WriteFile(path, content, default_mode, volume.name));
    }
    return OkStatus();
  }
  for (const api::KeyToPath& item : *source.items) {
    auto it = keys->find(item.key);
    if (it == keys->end()) {
      if (source.optional) continue;
      return NotFoundError(fmt::format("volume {}: {} \"{}\" has no key {}", volume.name, kind,
                                       source.name, item.key));
    }
    ASSIGN_OR_RETURN(fs::path path,
                     PathInside(dir, item.path, /*file=*/true,
                                fmt::format("volume {}: items[].path", volume.name)));
    RETURN_IF_ERROR(WriteFile(path, it->second, item.mode.value_or(default_mode), volume.name));
  }
  return OkStatus();
}

// A secret volume lives in memory, as the kubelet keeps it on tmpfs: its
// values never reach a disk. The pod's memory folder is the owner's alone.
Result<fs::path> SecretDir(const PodVolumeDirs& dirs, const std::string& volume) {
  RETURN_IF_ERROR(MakeDirectory(dirs.memory, volume));
  if (chmod(dirs.memory.c_str(), 0700) != 0) {
    return FailedPreconditionError(
        fmt::format("volume {}: cannot make {} private", volume, dirs.memory));
  }
  return VolumeDir(dirs.memory, volume);
}

// A claim's directory, made when its claim exists and is not being
// deleted (the kubelet starts no pod on a claim being deleted).
Result<std::string> PrepareClaim(const api::Pod& pod, const api::Volume& volume,
                                 const PodVolumeDirs& dirs, const store::ObjectStore& store) {
  const std::string& name = volume.persistent_volume_claim->claim_name;
  Result<api::Json> claim = store.Get({"PersistentVolumeClaim", pod.metadata.namespace_, name});
  if (!claim.ok()) {
    return NotFoundError(fmt::format(
        "volume {}: persistentvolumeclaim \"{}\" not found; create it (trainyard run accepts it "
        "beside the job)",
        volume.name, name));
  }
  if (!api::StringAt(*claim, {"metadata", "deletionTimestamp"}).empty()) {
    return NotFoundError(
        fmt::format("volume {}: persistentvolumeclaim \"{}\" is being deleted", volume.name, name));
  }
  if (api::StringAt(*claim, {"spec", "volumeMode"}) == "Block") {
    return FailedPreconditionError(fmt::format(
        "volume {}: persistentvolumeclaim \"{}\" is a Block volume, and a claim here is a "
        "folder; make it volumeMode: Filesystem",
        volume.name, name));
  }
  if (dirs.claims.empty()) {
    return FailedPreconditionError(
        fmt::format("volume {}: claims cannot be used here (no claims folder)", volume.name));
  }
  Result<std::string> dir = MakeClaimDir(dirs.claims, pod.metadata.namespace_, name);
  if (!dir.ok())
    return FailedPreconditionError(
        fmt::format("volume {}: {}", volume.name, dir.status().message()));
  return *dir;
}

// Where `volume` lives on this machine, made ready.
Result<std::string> PrepareVolume(const api::Pod& pod, const api::Volume& volume,
                                  const PodVolumeDirs& dirs, const store::ObjectStore& store) {
  if (volume.host_path) {
    RETURN_IF_ERROR(PrepareHostPath(volume));
    return volume.host_path->path;
  }
  if (volume.empty_dir) {
    bool memory = volume.empty_dir->medium == "Memory";
    ASSIGN_OR_RETURN(fs::path dir, VolumeDir(memory ? dirs.memory : dirs.disk, volume.name));
    RETURN_IF_ERROR(MakeDirectory(dir, volume.name));
    return dir.string();
  }
  // Emptied on each start: their names must never lead elsewhere.
  if (volume.config_map) {
    ASSIGN_OR_RETURN(fs::path dir, VolumeDir(dirs.disk, volume.name));
    KeyFiles files = KeyFilesOf("ConfigMap", volume.config_map->name, *volume.config_map);
    RETURN_IF_ERROR(PrepareKeyFiles(pod, volume, files, dir, store));
    return dir.string();
  }
  if (volume.secret) {
    ASSIGN_OR_RETURN(fs::path dir, SecretDir(dirs, volume.name));
    KeyFiles files = KeyFilesOf("Secret", volume.secret->secret_name, *volume.secret);
    RETURN_IF_ERROR(PrepareKeyFiles(pod, volume, files, dir, store));
    return dir.string();
  }
  if (volume.persistent_volume_claim) return PrepareClaim(pod, volume, dirs, store);
  std::string kind = !volume.extra.empty() ? volume.extra.begin().key() : "this";
  return FailedPreconditionError(fmt::format(
      "volume {}: {} volumes are not supported by the local engine; use hostPath, emptyDir, "
      "configMap, secret or persistentVolumeClaim",
      volume.name, kind));
}

// Where a path token may begin or end in a command line, an env value or
// a shell script (`args: |` scripts are the common Kubeflow style): the
// shell's word and command separators, quotes, and the separators of
// option values and path lists. Never a name character, so a mount path
// /data is not found in /data2, /data.bak or /x/data.
bool IsShellBoundary(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' ||
         c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '(' || c == ')' ||
         c == '{' || c == '}' || c == ':' || c == ',';
}

bool StartsPath(std::string_view text, size_t at) {
  return at == 0 || text[at - 1] == '=' || IsShellBoundary(text[at - 1]);
}

bool EndsPath(std::string_view text, size_t at) {
  return at == text.size() || text[at] == '/' || IsShellBoundary(text[at]);
}

}  // namespace

Result<std::string> ClaimDir(const std::string& claims, const std::string& namespace_,
                             const std::string& claim) {
  // Both are validated names; a store that bypassed validation must still
  // never lead out of the claims folder.
  if (!api::Dns1123LabelProblems(namespace_).empty() ||
      !api::Dns1123SubdomainProblems(claim).empty()) {
    return FailedPreconditionError(fmt::format(
        "persistentvolumeclaim {}/{}: not a valid namespace and claim name", namespace_, claim));
  }
  return (fs::path(claims) / namespace_ / claim).string();
}

Result<std::string> MakeClaimDir(const std::string& claims, const std::string& namespace_,
                                 const std::string& claim) {
  ASSIGN_OR_RETURN(std::string dir, ClaimDir(claims, namespace_, claim));
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return dir;
  fs::create_directories(dir, ec);
  bool closed = !ec && chmod(dir.c_str(), 0700) == 0 && chmod(claims.c_str(), 0711) == 0 &&
                chmod(fs::path(dir).parent_path().c_str(), 0711) == 0;
  if (!closed) {
    return FailedPreconditionError(fmt::format("persistentvolumeclaim {}/{}: cannot create {}{}",
                                               namespace_, claim, dir,
                                               ec ? ": " + ec.message() : ""));
  }
  return dir;
}

Result<Mounts> PrepareVolumes(const api::Pod& pod, const api::Container& container,
                              const PodVolumeDirs& dirs, const store::ObjectStore& store) {
  Mounts mounts;
  for (const api::VolumeMount& mount : container.volume_mounts) {
    auto volume = std::find_if(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                               [&](const api::Volume& v) { return v.name == mount.name; });
    if (volume == pod.spec.volumes.end()) {
      return FailedPreconditionError(
          fmt::format("volumeMount {}: the pod has no volume of that name", mount.name));
    }
    ASSIGN_OR_RETURN(std::string host, PrepareVolume(pod, *volume, dirs, store));
    if (!mount.sub_path.empty()) {
      ASSIGN_OR_RETURN(fs::path sub,
                       PathInside(host, mount.sub_path, /*file=*/false,
                                  fmt::format("volumeMount {}: subPath", mount.name)));
      host = sub.string();
      if (!volume->config_map && !volume->secret)
        RETURN_IF_ERROR(MakeDirectory(host, volume->name));
    }
    std::string path = mount.mount_path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    bool claim_read_only = volume->persistent_volume_claim &&
                           volume->persistent_volume_claim->read_only.value_or(false);
    mounts.push_back({.mount_path = std::move(path),
                      .host_path = std::move(host),
                      .read_only = mount.read_only.value_or(false) || claim_read_only ||
                                   volume->config_map || volume->secret,
                      .devices = volume->host_path.has_value()});
  }
  // Longest first, so /data/cache wins over /data.
  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& a, const Mount& b) {
    return a.mount_path.size() > b.mount_path.size();
  });
  return mounts;
}

std::optional<std::string> TranslatePaths(std::string_view text, const Mounts& mounts,
                                          size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const Mount* hit = nullptr;
    if (text[i] == '/' && StartsPath(text, i)) {
      for (const Mount& m : mounts) {
        if (text.substr(i).starts_with(m.mount_path) && EndsPath(text, i + m.mount_path.size())) {
          hit = &m;
          break;
        }
      }
    }
    std::string_view piece = hit != nullptr ? std::string_view(hit->host_path) : text.substr(i, 1);
    if (piece.size() > max_bytes - out.size()) return std::nullopt;
    out += piece;
    i += hit != nullptr ? hit->mount_path.size() : 1;
  }
  return out;
}

void RemoveVolumes(const PodVolumeDirs& dirs) {
  std::error_code ec;
  fs::remove_all(dirs.disk, ec);
  fs::remove_all(dirs.memory, ec);
  if (!dirs.hosts_file.empty()) fs::remove(dirs.hosts_file, ec);
}

}  // namespace trainyard::node
