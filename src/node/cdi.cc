#include "node/cdi.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "api/yaml.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

// More than any vendor's spec (NVIDIA's, for eight GPUs, is ~30 KiB).
constexpr uintmax_t kMaxSpecBytes = 4 << 20;

struct Spec {
  std::string file;
  api::Json doc;
};

// Every spec of `kind` in `dirs`, in the order later ones win.
Result<std::vector<Spec>> SpecsOf(const std::vector<std::string>& dirs, const std::string& kind) {
  std::vector<Spec> out;
  for (const std::string& dir : dirs) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string ext = entry.path().extension().string();
      if (entry.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      if (fs::file_size(file, ec) > kMaxSpecBytes) {
        return InvalidArgumentError(fmt::format("CDI spec {} is over 4 MiB", file.string()));
      }
      std::ifstream in(file, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Result<std::vector<api::SourceDocument>> docs = api::ParseManifests(text, file.string());
      if (!docs.ok() || docs->empty()) {
        return InvalidArgumentError(
            fmt::format("CDI spec {} does not parse: {}", file.string(),
                        docs.ok() ? "it is empty" : docs.status().message()));
      }
      if (api::StringAt((*docs)[0].value, "kind") == kind) {
        out.push_back({.file = file.string(), .doc = std::move((*docs)[0].value)});
      }
    }
  }
  return out;
}

// nvidia-ctk's hooks, from their args: "--link TARGET::LINK" and
// "--folder DIR" repeated.
Status AddHook(const Spec& spec, const api::Json& hook, CdiEdits& out) {
  std::vector<std::string> args;
  for (const api::Json& arg : api::ArrayRefAt(hook, "args")) {
    if (arg.is_string()) args.push_back(arg.get<std::string>());
  }
  auto has = [&](const char* word) {
    return std::find(args.begin(), args.end(), word) != args.end();
  };
  auto values = [&](const char* flag) {
    std::vector<std::string> found;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) found.push_back(args[i + 1]);
    }
    return found;
  };
  if (has("create-symlinks")) {
    for (const std::string& link : values("--link")) {
      size_t sep = link.find("::");
      if (sep == std::string::npos) {
        return InvalidArgumentError(fmt::format(
            "CDI spec {}: create-symlinks --link {}: want TARGET::LINK", spec.file, link));
      }
      out.symlinks.emplace_back(link.substr(0, sep), link.substr(sep + 2));
    }
    return OkStatus();
  }
  if (has("update-ldcache")) {
    for (const std::string& folder : values("--folder")) out.library_dirs.push_back(folder);
    return OkStatus();
  }
  return FailedPreconditionError(fmt::format(
      "CDI spec {} asks for a hook trainyard does not run: {} {}; regenerate the spec without it "
      "(nvidia-ctk cdi generate --disable-hook ...), or run the pod on this machine's files",
      spec.file, api::StringAt(hook, "path"), fmt::join(args, " ")));
}

Status AddEdits(const Spec& spec, const api::Json& edits, CdiEdits& out) {
  for (const api::Json& var : api::ArrayRefAt(edits, "env")) {
    std::string text = var.is_string() ? var.get<std::string>() : "";
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError(
          fmt::format("CDI spec {}: env {}: want NAME=VALUE", spec.file, var.dump()));
    }
    out.env.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
  for (const api::Json& node : api::ArrayRefAt(edits, "deviceNodes")) {
    out.device_nodes.push_back(
        {.path = api::StringAt(node, "path"), .host_path = api::StringAt(node, "hostPath")});
  }
  for (const api::Json& mount : api::ArrayRefAt(edits, "mounts")) {
    bool rw = false;
    for (const api::Json& option : api::ArrayRefAt(mount, "options")) rw |= option == "rw";
    out.mounts.push_back({.host_path = api::StringAt(mount, "hostPath"),
                          .container_path = api::StringAt(mount, "containerPath"),
                          .read_only = !rw});
  }
  for (const api::Json& hook : api::ArrayRefAt(edits, "hooks")) {
    RETURN_IF_ERROR(AddHook(spec, hook, out));
  }
  return OkStatus();
}

}  // namespace

Result<CdiEdits> CdiEditsFor(const std::vector<std::string>& dirs, const std::string& kind,
                             const std::vector<std::string>& devices) {
  ASSIGN_OR_RETURN(std::vector<Spec> specs, SpecsOf(dirs, kind));
  if (specs.empty()) {
    return NotFoundError(
        fmt::format("no CDI spec for {} in {}: make one with `nvidia-ctk cdi generate "
                    "--output=/etc/cdi/nvidia.yaml` (NVIDIA's container toolkit)",
                    kind, fmt::join(dirs, ", ")));
  }
  // name -> (spec, device): a later spec's device replaces an earlier's.
  std::map<std::string, std::pair<size_t, const api::Json*>> named;
  for (size_t i = 0; i < specs.size(); ++i) {
    for (const api::Json& device : api::ArrayRefAt(specs[i].doc, "devices")) {
      named[api::StringAt(device, "name")] = {i, &device};
    }
  }
  CdiEdits out;
  std::set<size_t> used_specs;
  std::vector<std::pair<size_t, const api::Json*>> chosen;
  for (const std::string& device : devices) {
    auto it = named.find(device);
    if (it == named.end()) {
      return NotFoundError(
          fmt::format("CDI device {}={} is in no spec in {}", kind, device, fmt::join(dirs, ", ")));
    }
    chosen.push_back(it->second);
    used_specs.insert(it->second.first);
  }
  // The spec-wide edits once (nvidiactl, the driver's libraries), then each
  // device's.
  for (size_t i : used_specs) {
    RETURN_IF_ERROR(AddEdits(specs[i], api::ValueAt(specs[i].doc, "containerEdits"), out));
  }
  for (const auto& [spec, device] : chosen) {
    RETURN_IF_ERROR(AddEdits(specs[spec], api::ValueAt(*device, "containerEdits"), out));
  }
  return out;
}

Mounts CdiMounts(const CdiEdits& edits) {
  Mounts out;
  for (const CdiDeviceNode& node : edits.device_nodes) {
    out.push_back({.mount_path = node.path,
                   .host_path = node.host_path.empty() ? node.path : node.host_path,
                   .devices = true});
  }
  for (const CdiMount& mount : edits.mounts) {
    out.push_back({.mount_path = mount.container_path,
                   .host_path = mount.host_path,
                   .read_only = mount.read_only});
  }
  return out;
}

Status MakeCdiSymlinks(const CdiEdits& edits, const ImageRoot& root) {
  Mounts links;
  for (const auto& [target, link] : edits.symlinks) {
    fs::path at(link);
    if (!at.is_absolute() || at.lexically_normal() != at ||
        std::find(at.begin(), at.end(), "..") != at.end() || at == "/") {
      return InvalidArgumentError(
          fmt::format("CDI symlink {}: want an absolute path other than /", link));
    }
    links.push_back({.mount_path = link});
  }
  // Their folders as a mount's: the image's modes, or 0755 where it has none.
  RETURN_IF_ERROR(MakeMountParents(root, links));
  for (const auto& [target, link] : edits.symlinks) {
    fs::path made = fs::path(root.upper) / fs::path(link).relative_path();
    std::error_code ec;
    fs::remove(made, ec);
    fs::create_symlink(target, made, ec);
    if (ec) {
      return InternalError(
          fmt::format("cannot make the CDI symlink {} -> {}: {}", link, target, ec.message()));
    }
  }
  return OkStatus();
}

void ApplyCdiEnv(const CdiEdits& edits, std::vector<std::pair<std::string, std::string>>& env) {
  auto set = [&](const std::string& name, const std::string& value) {
    std::erase_if(env, [&](const auto& e) { return e.first == name; });
    env.emplace_back(name, value);
  };
  for (const auto& [name, value] : edits.env) set(name, value);
  if (edits.library_dirs.empty()) return;
  std::string path = fmt::format("{}", fmt::join(edits.library_dirs, ":"));
  auto it = std::find_if(env.begin(), env.end(),
                         [](const auto& e) { return e.first == "LD_LIBRARY_PATH"; });
  if (it != env.end() && !it->second.empty()) path += ":" + it->second;
  set("LD_LIBRARY_PATH", path);
}

}  // namespace trainyard::node
