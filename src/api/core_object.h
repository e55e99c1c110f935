// An object that trainyard stores and serves but models through its
// descriptor alone (api/registry.h): Secret, Service, PersistentVolumeClaim
// and Trainer v2's runtimes. The descriptor's hooks decode, default and
// validate `fields` through the kind's typed structs (api/core_kinds.h,
// api/trainer.h), so that adding such a kind touches no code outside its
// own file.
#pragma once

#include <string>

#include "api/json.h"
#include "api/meta.h"

namespace trainyard::api {

struct CoreObject {
  std::string kind;  // "Secret"
  std::string api_version = "v1";
  ObjectMeta metadata;
  // Every top-level field but apiVersion, kind and metadata, as decoded.
  Json fields = Json::object();
  bool operator==(const CoreObject&) const = default;
};

}  // namespace trainyard::api
