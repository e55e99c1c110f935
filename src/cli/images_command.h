// `trainyard images`: the images this machine holds (`<home>/images`):
// list, pull, rm, prune.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace trainyard::cli {

struct ImagesOptions {
  std::string home;                 // default: DefaultHome()
  std::string action = "list";      // list | pull | rm | prune
  std::vector<std::string> images;  // pull's and rm's references
  std::string auth_file;            // pull: a containers-auth.json(5) file
};

// Exit code: 0, or 1 with what failed on `err`.
int RunImages(const ImagesOptions& options, std::ostream& out, std::ostream& err);

}  // namespace trainyard::cli
