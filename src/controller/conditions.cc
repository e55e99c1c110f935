#include "controller/conditions.h"

#include <algorithm>

namespace trainyard::controller {

const api::JobCondition* FindCondition(const std::vector<api::JobCondition>& conditions,
                                       const std::string& type) {
  for (const api::JobCondition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const std::vector<api::JobCondition>& conditions, const std::string& type) {
  const api::JobCondition* c = FindCondition(conditions, type);
  return c != nullptr && c->status == "True";
}

bool IsFinished(const std::vector<api::JobCondition>& conditions) {
  return IsTrue(conditions, "Succeeded") || IsTrue(conditions, "Failed");
}

bool SetCondition(std::vector<api::JobCondition>& conditions, const std::string& type,
                  const std::string& status, const std::string& reason, const std::string& message,
                  const std::string& now) {
  if (IsTrue(conditions, "Failed")) return false;
  const api::JobCondition* current = FindCondition(conditions, type);
  if (current != nullptr && current->status == status && current->reason == reason &&
      current->message == message) {
    return false;
  }
  api::JobCondition next{type, status, reason, message, now, now};
  if (current != nullptr && current->status == status) {
    next.last_transition_time = current->last_transition_time;
  }
  // Drop the old entry of this type, and the one this replaces.
  std::erase_if(conditions, [&](const api::JobCondition& c) {
    return c.type == type || (type == "Running" && c.type == "Restarting") ||
           (type == "Restarting" && c.type == "Running");
  });
  if (type == "Succeeded" || type == "Failed") {
    for (api::JobCondition& c : conditions) {
      if (c.type == "Running" && c.status == "True") {
        c.status = "False";
        c.last_update_time = now;
        c.last_transition_time = now;
      }
    }
  }
  conditions.push_back(std::move(next));
  return true;
}

std::optional<StoredCondition> StoredConditionOf(const api::Json& stored, const std::string& type) {
  for (const api::Json& c : api::ArrayRefAt(stored, {"status", "conditions"})) {
    if (api::StringAt(c, "type") == type) {
      return StoredCondition{api::StringAt(c, "status"), api::StringAt(c, "reason")};
    }
  }
  return std::nullopt;
}

}  // namespace trainyard::controller
