#include "cli/artifacts_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "api/json.h"
#include "cli/client_session.h"
#include "common/strings.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

std::string UrlEncoded(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

int List(Session& session, const std::string& path) {
  Result<ApiAnswer> answer = session.client->Get(path);
  if (!answer.ok()) return Fail(answer.status().message());
  if (!answer->ok()) return Fail(answer->Error());
  const api::Json& owner = api::ObjectAt(answer->body, {"owner"});
  if (owner.contains("deleted")) {
    std::cerr << fmt::format("({} {} was deleted at {}; its artifacts are kept until {})\n",
                             AsciiLower(api::StringAt(owner, "kind")), api::StringAt(owner, "name"),
                             api::StringAt(owner, "deleted"), api::StringAt(owner, "keptUntil"));
  }
  const api::Json items = api::ArrayAt(answer->body, "items");
  if (items.empty()) {
    std::cerr << "No artifacts: its replicas wrote nothing to $TRAINYARD_OUTPUT_DIR.\n";
    return 0;
  }
  size_t width = 4;
  for (const api::Json& item : items) width = std::max(width, api::StringAt(item, "path").size());
  std::cout << fmt::format("{:<{}}   {:>9}   MODIFIED\n", "PATH", width, "SIZE");
  for (const api::Json& item : items) {
    std::cout << fmt::format(
        "{:<{}}   {:>9}   {}\n", api::StringAt(item, "path"), width,
        HumanBytes(static_cast<uint64_t>(std::max<int64_t>(0, api::IntAt(item, "size")))),
        api::StringAt(item, "modified"));
  }
  if (api::BoolAt(answer->body, "truncated")) {
    std::cerr << fmt::format("(the first {} alone: there are more)\n", items.size());
  }
  return 0;
}

// Downloads into a file beside `target`, renamed into place once whole: a
// failed download leaves nothing under the name.
int Download(Session& session, const std::string& path, const std::string& artifact,
             std::string target) {
  if (target == "-") {
    Status streamed = session.client->Stream(path, [](std::string_view data) {
      std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
      return static_cast<bool>(std::cout);
    });
    return streamed.ok() ? 0 : Fail(streamed.message());
  }
  std::error_code ec;
  std::string name = fs::path(artifact).filename().string();
  if (target.empty()) {
    target = name;
    if (fs::exists(target, ec)) {
      return Fail(fmt::format("{} is here already: name another file with -o", target));
    }
  } else if (fs::is_directory(target, ec)) {
    target = (fs::path(target) / name).string();  // into the folder, as cp does
  }
  std::string part = fmt::format("{}.part-{}", target, getpid());
  std::ofstream out(part, std::ios::binary | std::ios::trunc);
  if (!out) {
    return Fail(fmt::format(
        "cannot write {}: {}", target,
        fs::exists(
            fs::path(target).parent_path().empty() ? fs::path(".") : fs::path(target).parent_path(),
            ec)
            ? "it may not be written there"
            : "its folder does not exist"));
  }
  Status streamed = session.client->Stream(path, [&](std::string_view data) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(out);
  });
  out.close();
  if (!streamed.ok() || !out) {
    std::remove(part.c_str());
    return Fail(streamed.ok() ? fmt::format("cannot write {}", target) : streamed.message());
  }
  if (std::rename(part.c_str(), target.c_str()) != 0) {
    std::remove(part.c_str());
    return Fail(fmt::format("cannot put {} in place", target));
  }
  std::cerr << fmt::format("{} -> {}\n", artifact, target);
  return 0;
}

}  // namespace

int RunArtifacts(const ClientCommand& command, const ArtifactsOptions& options) {
  Result<Session> session = OpenSession(command, options.kind);
  if (!session.ok()) return Fail(session.status().message());
  std::string path =
      ObjectPath(*session->resource, NamespaceOf(command), options.name) + "/artifacts";
  if (options.path.empty()) {
    if (!options.output.empty()) {
      return Fail("-o names where one file goes: name the artifact too (PATH)");
    }
    return List(*session, path);
  }
  return Download(*session, path + "?path=" + UrlEncoded(options.path), options.path,
                  options.output);
}

}  // namespace trainyard::cli
