// pods/<name>/exec: what the request asks for, checked against the pod as
// kube-apiserver and the kubelet check it; the session itself is the
// transport's (server/exec_session.h), on the connection it takes over.
#include <fmt/format.h>

#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {
ApiResponse ApiHandler::Exec(const ApiTarget& target, const ApiRequest& request) {
  auto bad = [](const std::string& message) {
    return ErrorResponse(MakeApiError(400, "BadRequest", message));
  };
  Result<api::Json> pod = backend_.store().Get({"Pod", target.namespace_, target.name});
  if (!pod.ok()) return ErrorResponse(ApiErrorOf(pod.status(), target.resource, target.name));
  std::vector<std::string> command;
  for (auto [it, end] = request.query.equal_range("command"); it != end; ++it) {
    command.push_back(it->second);
  }
  if (command.empty()) return bad("you must specify at least 1 command");
  ExecSpec spec{.stdin = request.Flag("stdin"),
                .stdout = request.Flag("stdout"),
                .stderr = request.Flag("stderr"),
                .tty = request.Flag("tty")};
  if (!spec.stdin && !spec.stdout && !spec.stderr) {
    return bad("you must specify at least 1 of stdin, stdout, stderr");
  }
  Result<std::string> container = internal::RequestedContainer(*pod, request);
  if (!container.ok()) return bad(std::string(container.status().message()));
  std::string phase = api::StringAt(*pod, {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed") {
    return bad(
        fmt::format("cannot exec into a container in a completed pod; current phase is {}", phase));
  }
  const api::Json* status = internal::ContainerStatusOf(*pod, *container);
  if (status == nullptr || !api::ObjectAt(*status, {"state"}).contains("running")) {
    return bad(fmt::format("container {} of pod {} is not running", *container, target.name));
  }
  Result<std::vector<std::string>> argv =
      backend_.ExecArgv(target.namespace_, target.name, *container, command);
  if (!argv.ok()) return ErrorResponse(ApiErrorOf(argv.status()));
  spec.argv = std::move(*argv);
  ApiResponse response;
  response.exec = std::move(spec);
  return response;
}

}  // namespace trainyard::server
