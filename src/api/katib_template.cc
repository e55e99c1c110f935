#include "api/katib_template.h"

#include <fmt/format.h>

#include "common/field_path.h"

namespace trainyard::api {
namespace {

constexpr std::string_view kPlaceholderStart = "${trialParameters.";

template <class F>
void ForEachString(Json& j, F&& f) {
  if (j.is_string()) {
    f(j.get_ref<std::string&>());
  } else if (j.is_structured()) {
    for (Json& child : j) ForEachString(child, f);
  }
}

// "${trialSpec.Labels[key]}" -> "key" when `form` is "Labels".
std::optional<std::string> BracketKey(std::string_view reference, std::string_view form) {
  std::string prefix = "${trialSpec." + std::string(form) + "[";
  if (!reference.starts_with(prefix) || !reference.ends_with("]}")) return std::nullopt;
  return std::string(reference.substr(prefix.size(), reference.size() - prefix.size() - 2));
}

// The value a metadata reference stands for, or an error.
Result<std::string> MetadataValue(std::string_view reference, const Json& job) {
  if (reference == "${trialSpec.Name}") return StringAt(job, {"metadata", "name"});
  if (reference == "${trialSpec.Namespace}") return StringAt(job, {"metadata", "namespace"});
  if (reference == "${trialSpec.Kind}") return StringAt(job, {"kind"});
  if (reference == "${trialSpec.APIVersion}") return StringAt(job, {"apiVersion"});
  for (std::string_view form : {"Labels", "Annotations"}) {
    if (std::optional<std::string> key = BracketKey(reference, form)) {
      std::string field = form == "Labels" ? "labels" : "annotations";
      const Json& map = ObjectAt(job, {"metadata", field.c_str()});
      auto it = map.find(*key);
      if (it == map.end() || !it->is_string()) {
        return InvalidArgumentError(
            fmt::format("{} refers to {} {}, which the trial template does not set", reference,
                        field, Quote(*key)));
      }
      return it->get<std::string>();
    }
  }
  return InvalidArgumentError(fmt::format("{} is not a metadata reference", reference));
}

}  // namespace

bool IsMetadataReference(std::string_view reference) {
  return reference == "${trialSpec.Name}" || reference == "${trialSpec.Namespace}" ||
         reference == "${trialSpec.Kind}" || reference == "${trialSpec.APIVersion}" ||
         BracketKey(reference, "Labels") || BracketKey(reference, "Annotations");
}

std::set<std::string> TemplatePlaceholders(const Json& document) {
  std::set<std::string> names;
  Json copy = document;
  ForEachString(copy, [&](std::string& s) {
    for (size_t at = s.find(kPlaceholderStart); at != std::string::npos;
         at = s.find(kPlaceholderStart, at + 1)) {
      size_t begin = at + kPlaceholderStart.size();
      size_t end = s.find('}', begin);
      if (end == std::string::npos) break;
      names.insert(s.substr(begin, end - begin));
    }
  });
  return names;
}

Result<Json> RenderTrialJob(const Json& template_spec,
                            const std::vector<TrialParameterSpec>& trial_parameters,
                            const std::map<std::string, std::string>& assignments,
                            const TrialJobIdentity& identity) {
  Json job = template_spec;
  if (!job.is_object()) return InvalidArgumentError("the trial template is not an object");
  Json& meta = job["metadata"];
  if (!meta.is_object()) meta = Json::object();
  meta["name"] = identity.name;
  if (!identity.namespace_.empty()) meta["namespace"] = identity.namespace_;
  std::map<std::string, std::string> values;
  for (const TrialParameterSpec& p : trial_parameters) {
    if (IsMetadataReference(p.reference)) {
      ASSIGN_OR_RETURN(values[p.name], MetadataValue(p.reference, job));
      continue;
    }
    auto it = assignments.find(p.reference);
    if (it == assignments.end()) {
      return InvalidArgumentError(fmt::format(
          "trial parameter {} references {}, which has no assigned value", p.name, p.reference));
    }
    values[p.name] = it->second;
  }
  ForEachString(job, [&](std::string& s) {
    for (const auto& [name, value] : values) {
      std::string placeholder = std::string(kPlaceholderStart) + name + "}";
      for (size_t at = s.find(placeholder); at != std::string::npos;
           at = s.find(placeholder, at + value.size())) {
        s.replace(at, placeholder.size(), value);
      }
    }
  });
  return job;
}

}  // namespace trainyard::api
