// Whom a container runs as in its image's root: a USER (or runAsUser)
// spelling, "user[:group]" by name or number, read against the image's own
// /etc/passwd and /etc/group as runc reads them, never the machine's.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::image {

struct ImageUser {
  std::string name;  // the passwd entry's, else the number as given
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // the image's groups that list the user
  std::string home = "/";     // the passwd entry's, else "/"
  bool operator==(const ImageUser&) const = default;
};

// `spec` resolved in the image whose unpacked layers are `layers`, top
// first (image/image_store.h). A number needs no entry (its group is then
// 0, as runc has it); a name does: NOT_FOUND, naming it and the file, when
// the image lacks it. The files are read without following symlinks (an
// image's /etc/passwd may point anywhere on the machine) and bounded.
Result<ImageUser> ResolveImageUser(const std::vector<std::string>& layers, const std::string& spec);

}  // namespace trainyard::image
