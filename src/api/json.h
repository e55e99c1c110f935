// The generic document type. Insertion-ordered so that fields we keep
// verbatim come back out in the order the user wrote them.
#pragma once

#include <nlohmann/json.hpp>

namespace trainyard::api {

using Json = nlohmann::ordered_json;

}  // namespace trainyard::api
