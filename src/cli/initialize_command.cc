#include "cli/initialize_command.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

int Fail(const InitializeOptions& options, const std::string& message) {
  std::cerr << fmt::format("{}-initializer: {}\n", options.what, message);
  return 1;
}

}  // namespace

int RunInitialize(const InitializeOptions& options) {
  const char* uri = std::getenv("STORAGE_URI");
  if (uri == nullptr || *uri == '\0') {
    return Fail(options, "STORAGE_URI is not set: give the TrainJob's spec.initializer." +
                             options.what + ".storageUri");
  }
  std::string source = uri;
  std::string scheme = source.substr(0, source.find("://"));
  if (scheme != "file" || source.find("://") == std::string::npos) {
    return Fail(options,
                fmt::format("cannot fetch {}: trainyard fetches only file:// URIs on this machine "
                            "(no {}:// store is reached from here); fetch it yourself and give "
                            "file:///its/path as storageUri",
                            source, scheme));
  }
  fs::path from = source.substr(std::string("file://").size());
  std::error_code ec;
  if (!fs::exists(from, ec)) return Fail(options, fmt::format("{} does not exist", from.string()));
  fs::create_directories(options.destination, ec);
  if (ec) {
    return Fail(options, fmt::format("cannot create {}: {}; is the initializer volume mounted "
                                     "there (or above it)?",
                                     options.destination, ec.message()));
  }
  fs::path to = fs::is_directory(from, ec) ? fs::path(options.destination)
                                           : fs::path(options.destination) / from.filename();
  fs::copy(from, to,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks,
           ec);
  if (ec) {
    return Fail(options,
                fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
  }
  std::cout << fmt::format("{} from {} is in {}\n", options.what, source, options.destination);
  return 0;
}

}  // namespace trainyard::cli
