// Errors as Kubernetes clients expect them: a `Status` object with an HTTP
// code, a reason kubectl and client libraries switch on, a message worded
// as the API server words it, and for invalid objects one cause per field.
#pragma once

#include <string>

#include "api/json.h"
#include "common/field_path.h"
#include "common/status.h"
#include "server/resources.h"

namespace trainyard::server {

struct ApiError {
  int code;
  api::Json body;  // kind: Status
};

ApiError MakeApiError(int code, const std::string& reason, const std::string& message);

// A trainyard Status as the API answers it. With a resource and a name,
// NOT_FOUND, ALREADY_EXISTS and ABORTED (a conflict) are worded as
// Kubernetes words them: `pytorchjobs.kubeflow.org "mnist" not found`.
ApiError ApiErrorOf(const Status& status, const Resource* resource = nullptr,
                    const std::string& name = "");

// 422 Invalid: `PyTorchJob.kubeflow.org "mnist" is invalid: [...]`, with a
// cause per error.
ApiError InvalidError(const Resource& resource, const std::string& name, const FieldErrors& errors);

// The body of a successful delete of something that has no object to show.
api::Json SuccessStatus(const Resource& resource, const std::string& name);

}  // namespace trainyard::server
