// What the node agent's files share; not a public API.
#pragma once

#include <string>
#include <string_view>

#include "api/pod.h"

namespace trainyard::node::internal {

// What every exit path ends with: "<prefix><run>.exit".
inline constexpr std::string_view kExitSuffix = ".exit";

// "<exits>/<namespace>/<pod>_<container>.<uid>.": what every exit path of
// a container's runs starts with.
std::string ExitPrefix(const std::string& exits_dir, const api::Pod& pod,
                       const std::string& container);

}  // namespace trainyard::node::internal
