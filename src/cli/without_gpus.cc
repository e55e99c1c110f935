#include "cli/without_gpus.h"

#include <string>

#include "common/quantity.h"

namespace trainyard::cli {
namespace {

bool IsGpu(const std::string& resource) { return resource.find("gpu") != std::string::npos; }

// Drops a container's GPUs; how many it asked for (its limit, else its
// request).
int64_t DropFromContainer(api::Json& container) {
  int64_t gpus = 0;
  if (api::Json* resources = container.is_object() && container.contains("resources")
                                 ? &container["resources"]
                                 : nullptr;
      resources != nullptr && resources->is_object()) {
    for (const char* kind : {"limits", "requests"}) {
      if (!resources->contains(kind) || !(*resources)[kind].is_object()) continue;
      api::Json& list = (*resources)[kind];
      for (auto it = list.begin(); it != list.end();) {
        if (!IsGpu(it.key())) {
          ++it;
          continue;
        }
        std::string text = it->is_string()   ? it->get<std::string>()
                           : it->is_number() ? it->dump()
                                             : "";
        Result<Quantity> q = Quantity::Parse(text);
        if (q.ok() && gpus == 0) gpus = q->milli() / 1000;
        it = list.erase(it);
      }
    }
  }
  if (!container.is_object()) return gpus;
  api::Json& env = container["env"];
  if (!env.is_array()) env = api::Json::array();
  for (auto it = env.begin(); it != env.end();) {
    it = api::StringAt(*it, "name") == "CUDA_VISIBLE_DEVICES" ? env.erase(it) : it + 1;
  }
  env.push_back({{"name", "CUDA_VISIBLE_DEVICES"}, {"value", ""}});
  return gpus;
}

}  // namespace

int64_t DropGpus(api::Json& document) {
  int64_t gpus = 0;
  if (document.is_array()) {
    for (api::Json& item : document) gpus += DropGpus(item);
    return gpus;
  }
  if (!document.is_object()) return 0;
  // A pod spec: its containers and init containers.
  for (const char* list : {"initContainers", "containers"}) {
    auto it = document.find(list);
    if (it == document.end() || !it->is_array()) continue;
    for (api::Json& container : *it) gpus += DropFromContainer(container);
  }
  for (auto& [key, value] : document.items()) {
    if (key != "containers" && key != "initContainers") gpus += DropGpus(value);
  }
  return gpus;
}

}  // namespace trainyard::cli
