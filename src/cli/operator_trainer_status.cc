#include "cli/operator_trainer_status.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>

#include "api/names.h"
#include "api/registry.h"
#include "api/trainer_status.h"
#include "api/well_known.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "kube/rest_path.h"
#include "kube/webhook_server.h"
#include "server/api_status.h"
#include "server/handler.h"

namespace trainyard::cli {
namespace {

using Reply = TrainerStatusServer::Answer;

// Upstream's body limit; the server takes a little more, so that a bigger
// body gets upstream's 413 document rather than a bare one.
constexpr size_t kMaxReportBytes = 64 * 1024;
// A token the API server said yes to is asked about again after this, or
// when it expires, whichever comes first.
constexpr Duration kReviewedFor = std::chrono::minutes(10);
// Tokens remembered at most (each a TrainJob's pod's).
constexpr size_t kMaxReviewed = 4096;
// TokenReviews asked of the API server: at most this many a second for one
// TrainJob, and for all of them together; beyond, 429. A token is asked
// about once in kReviewedFor, so these are far above what trainers need.
constexpr double kReviewsPerJob = 1;
constexpr double kReviewJobBurst = 5;
constexpr double kReviewsPerSecond = 20;
constexpr double kReviewBurst = 40;
// What a token bound to a pod names it by (TokenReview's user.extra).
constexpr char kPodNameExtra[] = "authentication.kubernetes.io/pod-name";
constexpr char kPodUidExtra[] = "authentication.kubernetes.io/pod-uid";

Reply ReplyError(int code, const char* reason, const std::string& message) {
  return Reply{code, server::MakeApiError(code, reason, message).body.dump()};
}

Reply ReplyForbidden() { return ReplyError(403, "Forbidden", "Forbidden"); }
Reply ReplyInternal() { return ReplyError(500, "InternalError", "Internal error"); }

// The namespace and name of `/apis/trainer.kubeflow.org/v1alpha1/namespaces/
// <ns>/trainjobs/<name>/status`, each a name an object can have.
std::optional<std::pair<std::string, std::string>> ParseStatusPath(std::string_view path) {
  if (!path.starts_with('/') || path.find("//") != std::string_view::npos) return std::nullopt;
  std::vector<std::string> parts = SplitNonEmpty(path, '/');
  if (parts.size() != 8 || parts[0] != "apis" || parts[1] != "trainer.kubeflow.org" ||
      parts[2] != "v1alpha1" || parts[3] != "namespaces" || parts[5] != "trainjobs" ||
      parts[7] != "status") {
    return std::nullopt;
  }
  if (!api::Dns1123LabelProblems(parts[4]).empty() ||
      !api::Dns1123SubdomainProblems(parts[6]).empty()) {
    return std::nullopt;
  }
  return std::pair{parts[4], parts[6]};
}

// The claims of a JWT, unverified (the API server verifies it): what the
// token says of itself, to turn away, without asking, one that is no JWT,
// has expired or is for another audience. Null when it is no JWT.
api::Json UnverifiedClaims(const std::string& token) {
  std::vector<std::string> parts = SplitNonEmpty(token, '.');
  if (parts.size() != 3) return nullptr;
  std::optional<std::string> text = Base64UrlDecode(parts[1]);
  if (!text) return nullptr;
  Result<api::Json> claims = api::ParseJsonValue(*text, "claims");
  return claims.ok() && claims->is_object() ? *claims : api::Json(nullptr);
}

// Whether `claims` hold `audience` (a string or a list) and have not
// expired at `now` (seconds since the epoch).
bool MayBeFor(const api::Json& claims, const std::string& audience, int64_t now) {
  const api::Json* aud = api::FindAt(claims, {"aud"});
  bool held = aud != nullptr &&
              ((aud->is_string() && *aud == audience) ||
               (aud->is_array() && std::find(aud->begin(), aud->end(), audience) != aud->end()));
  int64_t exp = api::IntAt(claims, {"exp"}, INT64_MAX);
  return held && exp > now;
}

// The first value of user.extra[key] in a TokenReview's status.
std::string ExtraOf(const api::Json& review, const char* key) {
  const api::Json* values = api::FindAt(review, {"status", "user", "extra", key});
  if (values == nullptr || !values->is_array() || values->empty() || !(*values)[0].is_string()) {
    return "";
  }
  return (*values)[0].get<std::string>();
}

}  // namespace

TrainerStatusServer::TrainerStatusServer(kube::KubeClient& client, const Clock& clock)
    : client_(client),
      clock_(clock),
      pushes_(server::kTrainerPushesPerSecond, server::kTrainerPushBurst),
      job_reviews_(kReviewsPerJob, kReviewJobBurst),
      reviews_(kReviewsPerSecond, kReviewBurst) {}

TrainerStatusServer::~TrainerStatusServer() { Stop(); }

Result<int> TrainerStatusServer::Start(const kube::ServingCertificate& certificate,
                                       const std::string& address, int port) {
  ASSIGN_OR_RETURN(server_, kube::MakeTlsServer(certificate, 2 * kMaxReportBytes));
  // Every path and method, so that what is not the endpoint gets
  // upstream's 404 document.
  auto serve = [this](const httplib::Request& req, httplib::Response& res) {
    Reply answer = Handle(req.method, req.path, req.get_header_value("Authorization"), req.body);
    res.status = answer.code;
    if (answer.code == 429) res.set_header("Retry-After", "1");
    res.set_content(answer.body, "application/json");
  };
  server_->Post(".*", serve);
  server_->Get(".*", serve);
  server_->Put(".*", serve);
  server_->Patch(".*", serve);
  server_->Delete(".*", serve);
  ASSIGN_OR_RETURN(int bound,
                   kube::BindServer(*server_, address, port, "the TrainJob status server"));
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void TrainerStatusServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Reply TrainerStatusServer::Handle(const std::string& method, const std::string& path,
                                  const std::string& authorization, const std::string& body) {
  auto target = ParseStatusPath(path);
  if (method != "POST" || !target) return ReplyError(404, "NotFound", "Not found");
  const auto& [ns, name] = *target;
  // As upstream's: who asks is checked before what is asked.
  std::string token = server::ApiRequest{.authorization = authorization}.BearerToken();
  if (token.empty()) return ReplyForbidden();
  if (std::optional<Reply> refused = Refusal(token, ns, name)) return *refused;
  if (body.size() > kMaxReportBytes) {
    return ReplyError(413, "RequestEntityTooLarge", "Payload too large");
  }
  Result<api::Json> request = api::ParseJsonValue(body, "the request body");
  if (!request.ok() || !request->is_object()) return ReplyError(422, "Invalid", "Invalid payload");
  // Nothing to say of the trainer: answered, and the TrainJob untouched.
  const api::Json* pushed = api::FindAt(*request, {"trainerStatus"});
  if (pushed == nullptr || pushed->is_null()) return Reply{200, request->dump()};
  FieldErrors errors;
  api::Json status =
      api::CheckedTrainerStatus(*pushed, FieldPath("status").Child("trainerStatus"), errors);
  if (!errors.empty()) {
    server::ApiError invalid =
        server::InvalidError(*api::ResourceTypeOfKind("TrainJob"), name, errors);
    return Reply{invalid.code, invalid.body.dump()};
  }
  if (!pushes_.Allow(ns + "/" + name, clock_.Now())) {
    server::ApiError slow = server::TrainerPushesTooFast(ns, name);
    return Reply{slow.code, slow.body.dump()};
  }
  return Write(ns, name, status);
}

std::optional<Reply> TrainerStatusServer::Refusal(const std::string& token,
                                                  const std::string& namespace_,
                                                  const std::string& name) {
  std::string audience = api::TrainerStatusAudience(namespace_, name);
  std::string key = audience + " " + token;
  TimePoint now = clock_.Now();
  {
    MutexLock lock(mu_);
    auto it = reviewed_.find(key);
    if (it != reviewed_.end() && it->second > now) return std::nullopt;
  }
  int64_t seconds =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  api::Json claims = UnverifiedClaims(token);
  if (!MayBeFor(claims, audience, seconds)) return ReplyForbidden();
  if (!job_reviews_.Allow(namespace_ + "/" + name, now) || !reviews_.Allow("", now)) {
    return ReplyError(429, "TooManyRequests",
                      "too many new tokens to check at once: report again in a second");
  }
  if (std::optional<Reply> refused = Review(token, namespace_, name)) return refused;
  TimePoint until =
      std::min(now + kReviewedFor,
               TimePoint(std::chrono::seconds(api::IntAt(claims, {"exp"}, seconds + 600))));
  MutexLock lock(mu_);
  if (reviewed_.size() >= kMaxReviewed) {
    std::erase_if(reviewed_, [&](const auto& entry) { return entry.second <= now; });
  }
  if (reviewed_.size() >= kMaxReviewed) reviewed_.clear();
  reviewed_[key] = until;
  return std::nullopt;
}

std::optional<Reply> TrainerStatusServer::Review(const std::string& token,
                                                 const std::string& namespace_,
                                                 const std::string& name) {
  std::string audience = api::TrainerStatusAudience(namespace_, name);
  api::Json review = {{"apiVersion", "authentication.k8s.io/v1"},
                      {"kind", "TokenReview"},
                      {"spec", {{"token", token}, {"audiences", {audience}}}}};
  Result<api::Json> reviewed =
      client_.Call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review);
  if (!reviewed.ok()) {
    fmt::print(stderr, "trainyard operator: TrainJob status server: cannot review a token: {}\n",
               reviewed.status().message());
    return ReplyInternal();
  }
  const api::Json& answer = *reviewed;
  const api::Json* audiences = api::FindAt(answer, {"status", "audiences"});
  bool for_this_job = audiences != nullptr && audiences->is_array() &&
                      std::find(audiences->begin(), audiences->end(), audience) != audiences->end();
  // A service account of the TrainJob's namespace.
  std::string user = api::StringAt(answer, {"status", "user", "username"});
  std::string prefix = "system:serviceaccount:" + namespace_ + ":";
  if (!api::BoolAt(answer, {"status", "authenticated"}) || !for_this_job ||
      !user.starts_with(prefix)) {
    return ReplyForbidden();
  }
  // A token the kubelet made for a pod: that pod must be the TrainJob's.
  std::string pod_name = ExtraOf(answer, kPodNameExtra);
  if (pod_name.empty()) return std::nullopt;
  Result<api::Json> pod = client_.Get("Pod", namespace_, pod_name);
  if (!pod.ok())
    return pod.status().code() == StatusCode::kNotFound ? ReplyForbidden() : ReplyInternal();
  std::string pod_uid = ExtraOf(answer, kPodUidExtra);
  bool same_pod = pod_uid.empty() || api::StringAt(*pod, {"metadata", "uid"}) == pod_uid;
  const std::string label(api::kJobSetNameLabel);
  bool jobs_pod = api::StringAt(*pod, {"metadata", "labels", label.c_str()}) == name;
  if (!same_pod || !jobs_pod) return ReplyForbidden();
  return std::nullopt;
}

Reply TrainerStatusServer::Write(const std::string& namespace_, const std::string& name,
                                 const api::Json& status) {
  // One merge patch of the status subresource, in place of the last report
  // (a field it leaves out is null: removed), as upstream's apply with one
  // field manager: no read first, no race to retry.
  api::Json report = status;
  for (const char* field :
       {"progressPercentage", "estimatedRemainingSeconds", "metrics", "lastUpdatedTime"}) {
    if (!report.contains(field)) report[field] = nullptr;
  }
  Result<std::string> path = kube::ObjectPath("TrainJob", namespace_, name, "status");
  Result<api::Json> written =
      path.ok() ? client_.Call("PATCH", *path, {{"status", {{"trainerStatus", report}}}},
                               "application/merge-patch+json")
                : Result<api::Json>(path.status());
  if (written.ok()) return Reply{200, api::Json{{"trainerStatus", status}}.dump()};
  const Status& failed = written.status();
  switch (failed.code()) {
    case StatusCode::kNotFound:
      return ReplyError(404, "NotFound", "Train job not found");
    case StatusCode::kInvalidArgument:
      return ReplyError(422, "Invalid", std::string(failed.message()));
    default:
      fmt::print(stderr, "trainyard operator: TrainJob status server: cannot write {}/{}: {}\n",
                 namespace_, name, failed.message());
      return ReplyInternal();
  }
}

}  // namespace trainyard::cli
