#include "server/api_status.h"

#include <fmt/format.h>

#include <vector>

namespace trainyard::server {
namespace {

// Kubernetes' metav1.CauseType for each kind of field error.
std::string CauseType(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kRequired:
      return "FieldValueRequired";
    case FieldErrorType::kForbidden:
      return "FieldValueForbidden";
    case FieldErrorType::kNotSupported:
      return "FieldValueNotSupported";
    case FieldErrorType::kDuplicate:
      return "FieldValueDuplicate";
    case FieldErrorType::kNotFound:
      return "FieldValueNotFound";
    case FieldErrorType::kTooLong:
      return "FieldValueTooLong";
    case FieldErrorType::kUnknownField:
      return "FieldValueInvalid";
    case FieldErrorType::kInvalid:
      break;
  }
  return "FieldValueInvalid";
}

api::Json Details(const Resource* resource, const std::string& name) {
  api::Json details = api::Json::object();
  if (!name.empty()) details["name"] = name;
  if (resource != nullptr) {
    if (!resource->group.empty()) details["group"] = resource->group;
    details["kind"] = resource->plural;
  }
  return details;
}

}  // namespace

ApiError MakeApiError(int code, const std::string& reason, const std::string& message) {
  return {code,
          {{"kind", "Status"},
           {"apiVersion", "v1"},
           {"metadata", api::Json::object()},
           {"status", "Failure"},
           {"message", message},
           {"reason", reason},
           {"code", code}}};
}

ApiError ApiErrorOf(const Status& status, const Resource* resource, const std::string& name) {
  std::string what = resource != nullptr && !name.empty()
                         ? fmt::format("{} \"{}\"", resource->Qualified(), name)
                         : "";
  ApiError error = [&] {
    switch (status.code()) {
      case StatusCode::kNotFound:
        return MakeApiError(404, "NotFound", what.empty() ? status.message() : what + " not found");
      case StatusCode::kAlreadyExists:
        return MakeApiError(409, "AlreadyExists",
                            what.empty() ? status.message() : what + " already exists");
      case StatusCode::kAborted:
        return MakeApiError(409, "Conflict",
                            what.empty() ? status.message()
                                         : fmt::format("Operation cannot be fulfilled on {}: the "
                                                       "object has been modified; please apply "
                                                       "your changes to the latest version and "
                                                       "try again",
                                                       what));
      case StatusCode::kInvalidArgument:
        return MakeApiError(400, "BadRequest", status.message());
      case StatusCode::kFailedPrecondition:
        return MakeApiError(422, "Invalid", status.message());
      case StatusCode::kOutOfRange:  // a watch from before the kept history
        return MakeApiError(410, "Expired", status.message());
      case StatusCode::kUnavailable:
        return MakeApiError(503, "ServiceUnavailable", status.message());
      case StatusCode::kUnimplemented:
        return MakeApiError(405, "MethodNotAllowed", status.message());
      default:
        return MakeApiError(500, "InternalError", status.message());
    }
  }();
  api::Json details = Details(resource, name);
  if (!details.empty()) error.body["details"] = std::move(details);
  return error;
}

ApiError InvalidError(const Resource& resource, const std::string& name,
                      const FieldErrors& errors) {
  std::vector<std::string> lines;
  api::Json causes = api::Json::array();
  for (const FieldError& e : errors) {
    lines.push_back(e.ToString());
    std::string rendered = e.ToString();
    std::string path = e.path.ToString();
    // The cause's message is the error without its path, as Kubernetes has it.
    std::string message = !path.empty() && rendered.starts_with(path + ": ")
                              ? rendered.substr(path.size() + 2)
                              : rendered;
    causes.push_back({{"reason", CauseType(e.type)}, {"message", message}, {"field", path}});
  }
  std::string list = lines.size() == 1 ? lines[0] : fmt::format("[{}]", fmt::join(lines, ", "));
  std::string kind = resource.group.empty() ? resource.kind : resource.kind + "." + resource.group;
  ApiError error =
      MakeApiError(422, "Invalid", fmt::format("{} \"{}\" is invalid: {}", kind, name, list));
  api::Json details = Details(&resource, name);
  details["kind"] = resource.kind;
  details["causes"] = std::move(causes);
  error.body["details"] = std::move(details);
  return error;
}

api::Json SuccessStatus(const Resource& resource, const std::string& name) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", api::Json::object()},
          {"status", "Success"},
          {"details", Details(&resource, name)}};
}

}  // namespace trainyard::server
