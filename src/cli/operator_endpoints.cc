#include "cli/operator_endpoints.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <cstring>
#include <variant>

#include "api/registry.h"
#include "api/yaml.h"
#include "common/listen.h"
#include "server/api_status.h"
#include "server/handler.h"
#include "server/push_refusal.h"
#include "tracking/trial_observations.h"

namespace trainyard::cli {
namespace {

// A push bigger than this is refused (a trial reports a few numbers at a
// time).
constexpr size_t kMaxPushBytes = 1 << 20;

void Answer(httplib::Response& res, int code, const api::Json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

void AnswerError(httplib::Response& res, const server::ApiError& error) {
  Answer(res, error.code, error.body);
}

const server::Resource& TrialResource() { return *api::ResourceTypeOfKind("Trial"); }

// 503 from a replica that does not act: its log is not the trials'.
bool Acting(const TrialObservations& o, httplib::Response& res) {
  if (o.acting->load()) return true;
  AnswerError(res, server::MakeApiError(503, "ServiceUnavailable",
                                        "this operator replica does not lead: the trials' "
                                        "observation log is the leader's; try again"));
  return false;
}

// GET: the trial's observation log.
void AnswerLog(const TrialObservations& o, const std::string& ns, const std::string& name,
               httplib::Response& res) {
  Result<api::Json> trial = o.trials->Get({"Trial", ns, name});
  if (!trial.ok()) {
    return AnswerError(res, server::ApiErrorOf(trial.status(), &TrialResource(), name));
  }
  Result<std::vector<store::ObservationRow>> rows = o.log->ListObservations(ns + "/" + name);
  if (!rows.ok()) return AnswerError(res, server::ApiErrorOf(rows.status()));
  Answer(res, 200, tracking::ObservationLogDocument(ns, name, *rows));
}

// POST: a Push trial's metrics, from its own code.
void TakePush(const TrialObservations& o, const std::string& ns, const std::string& name,
              const httplib::Request& req, httplib::Response& res) {
  Result<api::Json> trial = o.trials->Get({"Trial", ns, name});
  // Read as the server's API reads it (any case of "Bearer", spaces).
  std::string token =
      server::ApiRequest{.authorization = req.get_header_value("Authorization")}.BearerToken();
  // Only the trial's own code, with the token it was given, pushes (and
  // nobody learns whether a trial it has no token for exists).
  if (!trial.ok() || !tracking::IsTrialsToken(*trial, token)) {
    return AnswerError(res, server::MakeApiError(401, "Unauthorized",
                                                 "a push needs its trial's own token (the "
                                                 "TRAINYARD_METRICS_TOKEN it was given)"));
  }
  Result<api::Json> body = api::ParseJsonValue(req.body, "the request body");
  if (!body.ok() || !body->is_object()) {
    return AnswerError(
        res, server::MakeApiError(
                 400, "BadRequest",
                 body.ok() ? "the request body must be one JSON object" : body.status().message()));
  }
  auto parsed = tracking::PushedRows(*body, tracking::Micros(o.clock->Now()));
  if (auto* errors = std::get_if<FieldErrors>(&parsed)) {
    return AnswerError(res, server::InvalidError(TrialResource(), name, *errors));
  }
  const auto& rows = std::get<std::vector<store::ObservationRow>>(parsed);
  Result<api::Trial> decoded = tracking::StoredTrial(*trial);
  if (!decoded.ok()) return AnswerError(res, server::ApiErrorOf(decoded.status()));
  if (std::optional<server::ApiError> refused = server::RefusePush(*decoded)) {
    return AnswerError(res, *refused);
  }
  Status appended = o.log->AppendObservations(ns + "/" + name, rows, /*source=*/"", 0);
  if (!appended.ok()) return AnswerError(res, server::ApiErrorOf(appended));
  Answer(res, 200, tracking::PushedStatus(rows.size(), name));
}

void ServeObservations(httplib::Server& server, const TrialObservations& o) {
  static const char* kPath =
      R"(/apis/kubeflow\.org/v1beta1/namespaces/([a-z0-9][a-z0-9.-]{0,252})/trials/)"
      R"(([a-z0-9][a-z0-9.-]{0,252})/observations)";
  server.Get(kPath, [&o](const httplib::Request& req, httplib::Response& res) {
    if (Acting(o, res)) AnswerLog(o, req.matches[1], req.matches[2], res);
  });
  server.Post(kPath, [&o](const httplib::Request& req, httplib::Response& res) {
    if (Acting(o, res)) TakePush(o, req.matches[1], req.matches[2], req, res);
  });
}

}  // namespace

OperatorEndpoints::OperatorEndpoints() = default;

OperatorEndpoints::~OperatorEndpoints() { Stop(); }

Status OperatorEndpoints::Listen(httplib::Server& server, const std::string& address,
                                 const char* what) {
  size_t colon = address.rfind(':');
  std::string port_text = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError(
        fmt::format("{} address {:?}: want [host]:port, or 0 for none", what, address));
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  int port = std::stoi(port_text);
  server.set_socket_options(SetExclusiveListenOptions);
  int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    return UnavailableError(
        fmt::format("cannot listen on {} for {}: {}", address, what, std::strerror(errno)));
  }
  threads_.emplace_back([&server] { server.listen_after_bind(); });
  fmt::print(stderr, "trainyard operator: serving {} on {}:{}\n", what, host, bound);
  return OkStatus();
}

Status OperatorEndpoints::Start(const std::string& metrics_address,
                                const std::string& probe_address, const server::Metrics& metrics,
                                const store::ObjectReader& store, std::function<bool()> ready,
                                const TrialObservations* observations) {
  if (metrics_address != "0") {
    auto server = std::make_unique<httplib::Server>();
    server->Get("/metrics", [&metrics, &store](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.Render(store), "text/plain; version=0.0.4");
    });
    if (observations != nullptr) {
      server->set_payload_max_length(kMaxPushBytes);
      ServeObservations(*server, *observations);
    }
    RETURN_IF_ERROR(Listen(*server, metrics_address, "metrics"));
    servers_.push_back(std::move(server));
  }
  if (probe_address != "0") {
    auto server = std::make_unique<httplib::Server>();
    server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    server->Get("/readyz",
                [ready = std::move(ready)](const httplib::Request&, httplib::Response& res) {
                  bool yes = ready();
                  res.status = yes ? 200 : 503;
                  res.set_content(yes ? "ok" : "not ready", "text/plain");
                });
    RETURN_IF_ERROR(Listen(*server, probe_address, "health probes"));
    servers_.push_back(std::move(server));
  }
  return OkStatus();
}

void OperatorEndpoints::Stop() {
  for (auto& server : servers_) server->stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  servers_.clear();
}

}  // namespace trainyard::cli
