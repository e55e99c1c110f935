#include "node/volumes.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "api/json.h"
#include "api/names.h"
#include "api/registry.h"
#include "common/held_dir.h"
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
Status VolumeName(const std::string& volume) {
  if (!api::Dns1123LabelProblems(volume).empty()) {
    return FailedPreconditionError(fmt::format(
        "volume \"{}\": the name must be a lowercase RFC 1123 label; rename the volume", volume));
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

// Where a key's file goes in `dir`: its folders made (trainyard's), and
// its own name.
Result<std::pair<HeldDir, std::string>> KeyFileAt(const HeldDir& dir, const std::string& path,
                                                  const std::string& what) {
  api::NameProblems problems = api::LocalDescendingPathProblems(path);
  if (path.empty()) problems.push_back("must not be empty");
  if (!problems.empty()) {
    return FailedPreconditionError(fmt::format(
        "{} \"{}\" {}; refusing to use a path outside the volume", what, path, problems.front()));
  }
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string folders = slash == std::string::npos ? "" : path.substr(0, slash);
  ASSIGN_OR_RETURN(HeldDir at, dir.Descend(folders, 0755));
  return std::make_pair(std::move(at), std::move(name));
}

// A configMap or secret volume as files: every key, or the items listed,
// each with its mode (defaultMode, else 0644, as the kubelet) and handed
// to the replica's user.
Status PrepareKeyFiles(const api::Pod& pod, const api::Volume& volume, const KeyFiles& source,
                       const HeldDir& dir, const std::optional<FileOwner>& owner,
                       const store::ObjectStore& store) {
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
  auto write = [&](const std::string& path, const std::string& content, int mode,
                   const std::string& what) -> Status {
    ASSIGN_OR_RETURN(auto at,
                     KeyFileAt(dir, path, fmt::format("volume {}: {}", volume.name, what)));
    Status written = at.first.WriteFile(at.second, content, static_cast<mode_t>(mode), owner);
    if (!written.ok()) {
      return FailedPreconditionError(fmt::format("volume {}: {}", volume.name, written.message()));
    }
    return OkStatus();
  };
  if (source.items->empty()) {
    for (const auto& [key, content] : *keys) {
      RETURN_IF_ERROR(write(key, content, default_mode, "key"));
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
    RETURN_IF_ERROR(write(item.path, it->second, item.mode.value_or(default_mode), "items[].path"));
  }
  return OkStatus();
}

// The pod's folder for volumes of one medium (on disk, or in memory),
// trainyard's alone: only trainyard names what is in it.
Result<HeldDir> VolumesRoot(const PodVolumeDirs& dirs, bool memory) {
  if (memory) return HeldDir::OpenOwn(dirs.memory, 0711);
  // The pod's folder above it too: its hosts file is written there.
  ASSIGN_OR_RETURN(HeldDir pod, HeldDir::OpenOwn(fs::path(dirs.disk).parent_path().string(), 0711));
  return pod.OwnChild(fs::path(dirs.disk).filename().string(), 0711);
}

// A configMap or secret volume's folder, made anew on each start (a
// restarted replica sees the object as it is now): made whole while only
// trainyard writes there, so nothing a replica left is followed; then, for
// a secret, whose values no one else may read, handed to the replica's
// user (a configMap's stays readable by all, mounted read-only anyway).
Result<std::string> PrepareKeyVolume(const api::Pod& pod, const api::Volume& volume,
                                     const KeyFiles& files, const PodVolumeDirs& dirs,
                                     const std::optional<FileOwner>& owner,
                                     const store::ObjectStore& store) {
  bool secret = api::HoldsSecrets(files.kind);
  RETURN_IF_ERROR(VolumeName(volume.name));
  ASSIGN_OR_RETURN(HeldDir root, VolumesRoot(dirs, /*memory=*/secret));
  RETURN_IF_ERROR(root.Remove(volume.name));
  ASSIGN_OR_RETURN(HeldDir dir, root.Child(volume.name, secret ? 0700 : 0755));
  RETURN_IF_ERROR(PrepareKeyFiles(pod, volume, files, dir, owner, store));
  if (secret && owner) RETURN_IF_ERROR(GiveTree(dir.path(), *owner));
  return dir.path();
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
                                  const PodVolumeDirs& dirs, const std::optional<FileOwner>& owner,
                                  const store::ObjectStore& store) {
  if (volume.host_path) {
    RETURN_IF_ERROR(PrepareHostPath(volume));
    return volume.host_path->path;
  }
  if (volume.empty_dir) {
    // The replica's user's from the start: trainyard never writes in it.
    RETURN_IF_ERROR(VolumeName(volume.name));
    ASSIGN_OR_RETURN(HeldDir root, VolumesRoot(dirs, volume.empty_dir->medium == "Memory"));
    ASSIGN_OR_RETURN(HeldDir dir, root.Child(volume.name, 0750, owner));
    return dir.path();
  }
  if (volume.config_map) {
    KeyFiles files = KeyFilesOf("ConfigMap", volume.config_map->name, *volume.config_map);
    return PrepareKeyVolume(pod, volume, files, dirs, owner, store);
  }
  if (volume.secret) {
    KeyFiles files = KeyFilesOf("Secret", volume.secret->secret_name, *volume.secret);
    return PrepareKeyVolume(pod, volume, files, dirs, owner, store);
  }
  if (volume.persistent_volume_claim) return PrepareClaim(pod, volume, dirs, store);
  std::string kind = !volume.extra.empty() ? volume.extra.begin().key() : "this";
  return FailedPreconditionError(fmt::format(
      "volume {}: {} volumes are not supported by the local engine; use hostPath, emptyDir, "
      "configMap, secret or persistentVolumeClaim",
      volume.name, kind));
}

// A subPath's folders in a volume a replica's user shapes (an emptyDir, a
// claim): made from the volume's folder down without following a link,
// and handed to that user.
Status MakeSubPath(const std::string& volume_dir, const std::string& sub_path,
                   const std::optional<FileOwner>& owner, const std::string& volume) {
  Result<HeldDir> top = HeldDir::Open(volume_dir);
  Result<HeldDir> made = top.ok() ? top->Descend(sub_path, 0750, owner) : top.status();
  if (!made.ok()) {
    return FailedPreconditionError(
        fmt::format("volume {}: subPath {:?}: {}", volume, sub_path, made.status().message()));
  }
  return OkStatus();
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
                              const PodVolumeDirs& dirs, const std::optional<FileOwner>& owner,
                              const store::ObjectStore& store) {
  Mounts mounts;
  for (const api::VolumeMount& mount : container.volume_mounts) {
    auto volume = std::find_if(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                               [&](const api::Volume& v) { return v.name == mount.name; });
    if (volume == pod.spec.volumes.end()) {
      return FailedPreconditionError(
          fmt::format("volumeMount {}: the pod has no volume of that name", mount.name));
    }
    ASSIGN_OR_RETURN(std::string host, PrepareVolume(pod, *volume, dirs, owner, store));
    if (!mount.sub_path.empty()) {
      ASSIGN_OR_RETURN(fs::path sub,
                       PathInside(host, mount.sub_path, /*file=*/false,
                                  fmt::format("volumeMount {}: subPath", mount.name)));
      if (volume->host_path) {
        RETURN_IF_ERROR(MakeDirectory(sub, volume->name));  // the machine's, as the kubelet
      } else if (!volume->config_map && !volume->secret) {
        RETURN_IF_ERROR(MakeSubPath(host, mount.sub_path, owner, volume->name));
      }
      host = sub.string();
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
  // What replicas shaped, removed without following their links.
  (void)RemoveTree(dirs.disk);
  (void)RemoveTree(dirs.memory);
  (void)RemoveTree(dirs.roots);  // the writable layers of its image roots
  std::error_code ec;
  if (!dirs.hosts_file.empty()) fs::remove(dirs.hosts_file, ec);
}

Status WriteHostsFile(const PodVolumeDirs& dirs, std::string_view content) {
  fs::path path(dirs.hosts_file);
  ASSIGN_OR_RETURN(HeldDir pod, HeldDir::OpenOwn(path.parent_path().string(), 0711));
  return pod.WriteFile(path.filename().string(), content, 0644);
}

}  // namespace trainyard::node
