// The Kubernetes-style API, apart from any transport: a request (method,
// path, query, headers that matter, body) becomes a response, or a stream
// for watches and followed logs. The HTTP server (http_server.h) is a thin
// layer over this; tests and the fuzzer call it directly.
//
// Reads come from the store; every write runs through Backend::Execute, so
// it is durable before it is answered. Objects are decoded, defaulted and
// validated exactly as `trainyard validate` does; an invalid one gets 422
// with a cause per field and changes nothing.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "server/api_path.h"
#include "server/api_status.h"
#include "server/backend.h"
#include "server/mlflow_api.h"
#include "server/push_limiter.h"
#include "server/service_account_tokens.h"

namespace trainyard::server {

struct ApiRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;
  std::multimap<std::string, std::string> query;
  std::string content_type;
  std::string accept;
  std::string authorization;  // the Authorization header
  std::string user_agent;     // the User-Agent header
  std::string body;

  // The first value of a query parameter, or "".
  std::string Param(const std::string& name) const;
  // A boolean parameter, spelt as Go's ParseBool takes it (true, True, 1, t, ...).
  bool Flag(const std::string& name) const;
  // The token of an `Authorization: Bearer <token>` header (the scheme in
  // any case, as Kubernetes reads it), or "".
  std::string BearerToken() const;
};

// What a watch or a followed log sends after the response's headers.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Appends what is ready to `out`, waiting up to `wait` for something;
  // false once the stream has ended (after what it appended is sent).
  virtual bool Next(std::string& out, Duration wait) = 0;
  // Once it has ended: whether it ended short of what it set out to send
  // (a file that shrank as it was read). The transport then breaks the
  // response off, so the client sees an error rather than a clean end.
  virtual bool Failed() const { return false; }
};

// A command to run beside a pod's container, its streams relayed over the
// connection the request came on (pods/exec): what the transport does
// once it has taken the connection over.
struct ExecSpec {
  std::vector<std::string> argv;  // ready to execute (Backend::ExecArgv)
  bool stdin = false;
  bool stdout = false;
  bool stderr = false;
  bool tty = false;
};

struct ApiResponse {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::string> warnings;  // sent as `Warning: 299 - "..."` headers
  std::vector<std::pair<std::string, std::string>> headers;  // sent as they are
  std::unique_ptr<ResponseStream> stream;                    // set: sent after body, chunked
  std::optional<ExecSpec> exec;  // set: the connection is upgraded for it
};

class Authorizer;
struct PatchSchema;
class Metrics;

class ApiHandler {
 public:
  // `auth`: who may do what; null serves everyone (loopback by default).
  // `metrics`: what /metrics shows, and where requests are counted.
  // `api_only`: as kube-apiserver, clients create and update pods and
  // events too (an operator and a test playing the kubelet); otherwise
  // only the controllers and the node agent write them.
  ApiHandler(Backend& backend, const Clock& clock, const Authorizer* auth = nullptr,
             Metrics* metrics = nullptr, bool api_only = false)
      : backend_(backend),
        clock_(clock),
        auth_(auth),
        metrics_(metrics),
        api_only_(api_only),
        mlflow_(backend, clock) {}

  // Never throws: a request it cannot make sense of gets a 4xx Status.
  ApiResponse Handle(const ApiRequest& request);

  // Makes the "default" namespace when it does not exist yet.
  Status EnsureDefaultNamespace();

 private:
  ApiResponse Authorized(const ApiRequest& request);
  // Whether clients may `verb` objects of `r` here.
  bool Permits(const Resource& r, std::string_view verb) const;
  ApiResponse Dispatch(const ApiRequest& request);
  std::optional<ApiResponse> Discovery(const ApiRequest& request);
  // The dashboard's files (server/ui_assets.h), or "/"'s list of paths for
  // a client that is no browser.
  std::optional<ApiResponse> Dashboard(const ApiRequest& request) const;
  ApiResponse Read(const ApiTarget& target, const ApiRequest& request);
  ApiResponse List(const ApiTarget& target, const ApiRequest& request);
  ApiResponse Watch(const ApiTarget& target, const ApiRequest& request);
  // One page of a list (`limit`, `continue`: list_pages.cc).
  struct ListPage {
    std::vector<api::Json> items;
    std::string continue_token;  // empty: this is the last page
    // How many more there are: said, as kube-apiserver says it, only of a
    // list without selectors.
    std::optional<int64_t> remaining;
    int64_t resource_version = 0;  // the first page's
  };
  // What reads a list's objects (a store's ScanWhere).
  using ListScan = std::function<Result<int64_t>(const store::ListQuery&,
                                                 const std::function<bool(const api::Json&)>&)>;
  // The page `request` asks for of what `query` selects (the page's
  // `after` is set here from the continue token), read with `scan`, which
  // stops once the page is full. `selected`: the query or the caller's
  // filter holds selectors.
  static std::variant<ListPage, ApiError> Paged(const ApiRequest& request, store::ListQuery query,
                                                bool selected, const ListScan& scan);
  ApiResponse Logs(const ApiTarget& target, const ApiRequest& request);
  // pods/<name>/exec: the command checked against the pod, to be run by the
  // transport (server/exec_session.h).
  ApiResponse Exec(const ApiTarget& target, const ApiRequest& request);
  // Katib's ObservationLog; with `series`, the values as series to draw,
  // downsampled (server/metric_series.h).
  ApiResponse Observations(const ApiTarget& target, const ApiRequest& request);
  ApiResponse PushObservations(const ApiTarget& target, const ApiRequest& request);
  // What a job's replicas left in its output folder (artifacts_api.cc).
  ApiResponse Artifacts(const ApiTarget& target, const ApiRequest& request);
  // A push to a trial's observations with the trial's uid as its bearer
  // token: what trials are given, so that their code needs no other.
  bool IsTrialsOwnPush(const ApiRequest& request) const;
  ApiResponse Create(const ApiTarget& target, const ApiRequest& request);
  // POST pods/<name>/binding (API-only servers): assigns the pod to the
  // Binding's target node, as kube-apiserver does for a scheduler.
  ApiResponse Bind(const ApiTarget& target, const ApiRequest& request);
  ApiResponse Replace(const ApiTarget& target, const ApiRequest& request);
  ApiResponse Patch(const ApiTarget& target, const ApiRequest& request);
  // <kind>/<name>/scale: the object's autoscaling/v1 Scale, read, replaced
  // or patched (handler_scale.cc).
  ApiResponse Scale(const ApiTarget& target, const ApiRequest& request);
  // POST trainjobs/<name>/status: the trainer's own progress report
  // (trainer_status.cc); IsTrainJobsOwnPush: sent with the TrainJob's
  // token, what its trainer's pods are given.
  ApiResponse PushTrainerStatus(const ApiTarget& target, const ApiRequest& request);
  bool IsTrainJobsOwnPush(const ApiRequest& request) const;
  // POST serviceaccounts/<name>/token (TokenRequest) and POST
  // /apis/authentication.k8s.io/v1/tokenreviews (token_api.cc).
  ApiResponse RequestToken(const ApiTarget& target, const ApiRequest& request);
  // What a subresource path answers (binding, log, exec, observations,
  // artifacts, token, a trainer's status push); nothing for the others.
  std::optional<ApiResponse> Subresource(const ApiTarget& target, const ApiRequest& request);
  // 405 for `request`'s method on `r`.
  ApiResponse NotAllowed(const ApiRequest& request, const Resource& r) const;
  ApiResponse ReviewToken(const ApiRequest& request);
  // Server-side apply (application/apply-patch+yaml): creates the object,
  // or merges the applied configuration into it, keeping managedFields.
  ApiResponse Apply(const ApiTarget& target, const ApiRequest& request);
  // Creates `body` (parsed): checked, admitted, its managers recorded
  // (`applied`: by an apply rather than an update).
  ApiResponse CreateObject(const ApiTarget& target, const ApiRequest& request, api::Json body,
                           bool applied);
  ApiResponse Delete(const ApiTarget& target, const ApiRequest& request);
  // Stores an update of `stored`, keeping its deletionTimestamp, and
  // deletes the object once one marked for deletion has no finalizers left.
  Result<api::Json> Finish(store::ObjectStore& store, const api::Json& stored, api::Json updated);
  // Deletes the stored pod `stored` as kube-apiserver does (`grace`: the
  // request's grace period, if it gave one); what the DELETE answers.
  Result<api::Json> DeletePod(store::ObjectStore& store, api::Json stored,
                              std::optional<int64_t> grace);
  // `object` as kube-apiserver takes a new one of `r`'s kind: its status
  // its own (none sent is kept where the kind has a status subresource),
  // a new Node tainted not ready.
  void AsCreated(const Resource& r, api::Json& object) const;

  // The object as stored after `body` was checked: decoded, defaulted and
  // validated (fieldValidation decides what unknown fields do); or the
  // error to answer with.
  struct Checked {
    api::Json object;
    std::vector<std::string> warnings;
  };
  std::variant<Checked, ApiError> Check(const ApiTarget& target, api::Json body,
                                        const ApiRequest& request) const;
  static std::variant<Checked, ApiError> CheckKeptAsSent(const Resource& r, api::Json body);
  // The 403 for an object whose pods its namespace's Pod Security level
  // forbids (pod_security.h); none on a server without tokens.
  std::optional<ApiError> PodSecurity(const ApiTarget& target, const api::Json& object) const;
  // The 422 for what the backend's admission refuses (Backend::Admit);
  // its warnings added to `checked`'s.
  std::optional<ApiError> Admit(const ApiTarget& target, Checked& checked, bool update) const;
  // `updated`'s status in place of `stored`'s, checked as the whole object
  // it makes: the object to hand UpdateStatus, or the error.
  std::variant<Checked, ApiError> StatusReplaced(const ApiTarget& target, const api::Json& stored,
                                                 const api::Json& updated,
                                                 const ApiRequest& request) const;
  struct ParsedPatch {
    api::Json body;
    bool json_patch = false;  // RFC 6902; else a merge patch
    // A strategic merge patch: the merge patch, with lists merged and
    // directives read as the kind's schema says.
    const PatchSchema* strategic = nullptr;
  };
  // `stored` with the patch applied and checked, ready to store.
  std::variant<Checked, ApiError> Patched(const ApiTarget& target, const ApiRequest& request,
                                          const api::Json& stored, const ParsedPatch& patch) const;
  // `changed` (`stored` with a patch or an apply made) checked as an
  // update of `stored`; `record_update`: its writer's changed fields made
  // its own in managedFields (an apply records its own).
  std::variant<Checked, ApiError> ChangeChecked(const ApiTarget& target, const ApiRequest& request,
                                                const api::Json& stored, api::Json changed,
                                                bool record_update) const;
  // Reads the object, makes and checks the change with `check` off the
  // control loop, and stores it if the object is still as read.
  using CheckAgainst = std::function<std::variant<Checked, ApiError>(const api::Json& stored)>;
  ApiResponse WriteChecked(const ApiTarget& target, const CheckAgainst& check);
  // Runs a write; its own error (an ApiError set by `write`) or the
  // store's comes back as the response.
  using CheckedWrite =
      std::function<Result<api::Json>(store::ObjectStore&, std::optional<ApiError>&)>;
  ApiResponse Write(const ApiTarget& target, const std::string& name, int code,
                    const CheckedWrite& write, std::vector<std::string> warnings = {});

  ApiResponse Object(int code, const api::Json& object) const;
  // `objects` as one object (`single`), a List or a Table, taken, not
  // copied; `list_metadata`: what a list's metadata says besides its
  // version (a page's `continue`).
  ApiResponse Render(const ApiTarget& target, const ApiRequest& request,
                     std::vector<api::Json> objects, int64_t resource_version, bool single,
                     const api::Json& list_metadata = api::Json::object()) const;

  Backend& backend_;
  const Clock& clock_;
  const Authorizer* auth_;
  Metrics* metrics_;
  bool api_only_ = false;
  MlflowApi mlflow_;
  // Trainers' progress reports: a few a second per TrainJob at most.
  PushLimiter trainer_pushes_{kTrainerPushesPerSecond, kTrainerPushBurst};
  ServiceAccountTokens tokens_;
};

ApiResponse ErrorResponse(const ApiError& error);

}  // namespace trainyard::server
