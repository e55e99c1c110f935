#include "server/service_account_tokens.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <stdexcept>

#include "api/yaml.h"
#include "common/strings.h"

namespace trainyard::server {
namespace {

using api::Json;

// kube-apiserver's bounds on a requested token's life.
constexpr int64_t kMinTokenSeconds = 600;
constexpr int64_t kMaxTokenSeconds = int64_t{1} << 32;
constexpr int64_t kDefaultTokenSeconds = 3600;
// The claim kube-apiserver keeps its own facts of a token under.
constexpr char kClaims[] = "kubernetes.io";

int64_t Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::vector<std::string> Strings(const Json* list) {
  std::vector<std::string> out;
  if (list == nullptr || !list->is_array()) return out;
  for (const Json& item : *list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string Quoted(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& item : items) quoted.push_back(fmt::format("{:?}", item));
  return "[" + Join(quoted, " ") + "]";
}

// The object `key` names, if it is still the one of `uid`.
bool Same(const store::ObjectReader& store, const store::ObjectKey& key, const std::string& uid) {
  Result<Json> object = store.Get(key);
  return object.ok() && api::StringAt(*object, {"metadata", "uid"}) == uid;
}

// The review answered with `status`.
Json Answered(const Json& review, Json status) {
  Json out = review;
  out["apiVersion"] = "authentication.k8s.io/v1";
  out["kind"] = "TokenReview";
  out["metadata"] = {{"creationTimestamp", nullptr}};
  out["status"] = std::move(status);
  return out;
}

Json Unauthenticated(const Json& review, const std::string& why) {
  return Answered(review,
                  {{"user", Json::object()}, {"error", "[invalid bearer token, " + why + "]"}});
}

// What a token may be bound to: the kind, its plural (for "not found"),
// and the claim naming it.
struct Bindable {
  const char* kind;
  const char* plural;
  const char* claim;
};
constexpr Bindable kBindable[] = {{"Pod", "pods", "pod"}, {"Secret", "secrets", "secret"}};

// The object a request binds its token to (one of kBindable, of the
// namespace): {claim, name, uid}, or null.
Result<Json> BoundObject(const store::ObjectReader& store, const std::string& namespace_,
                         const Json& request) {
  const Json* ref = api::FindAt(request, {"spec", "boundObjectRef"});
  if (ref == nullptr || ref->is_null()) return Json();
  std::string kind = api::StringAt(*ref, "kind");
  const Bindable* bindable = std::find_if(std::begin(kBindable), std::end(kBindable),
                                          [&](const Bindable& b) { return kind == b.kind; });
  if (bindable == std::end(kBindable)) {
    return InvalidArgumentError(
        fmt::format("spec.boundObjectRef.kind: Unsupported value: {:?}: supported values: \"Pod\", "
                    "\"Secret\"",
                    kind));
  }
  std::string name = api::StringAt(*ref, "name");
  Result<Json> object = store.Get({kind, namespace_, name});
  if (!object.ok()) return NotFoundError(fmt::format("{} {:?} not found", bindable->plural, name));
  std::string uid = api::StringAt(*object, {"metadata", "uid"});
  std::string asked = api::StringAt(*ref, "uid");
  if (!asked.empty() && asked != uid) {
    return Status(StatusCode::kAborted,
                  fmt::format("Operation cannot be fulfilled on {} {:?}: the UID in the bound "
                              "object reference ({}) does not match the UID in record. The "
                              "object might have been deleted and then recreated",
                              kind, name, asked));
  }
  return Json{{"claim", bindable->claim}, {"name", name}, {"uid", uid}};
}

}  // namespace

ServiceAccountTokens::ServiceAccountTokens() {
  key_.resize(32);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key_.data()), static_cast<int>(key_.size())) !=
      1) {
    throw std::runtime_error("no random bytes for the service account token key");
  }
}

std::string ServiceAccountTokens::Sign(const std::string& payload) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac, &size);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac), size));
}

Result<Json> ServiceAccountTokens::Request(const store::ObjectReader& store,
                                           const std::string& namespace_, const std::string& name,
                                           const Json& request, TimePoint now) const {
  int64_t seconds = kDefaultTokenSeconds;
  if (const Json* asked = api::FindAt(request, {"spec", "expirationSeconds"});
      asked != nullptr && !asked->is_null()) {
    if (!asked->is_number_integer()) {
      return InvalidArgumentError("spec.expirationSeconds: Invalid value: must be an integer");
    }
    seconds = asked->get<int64_t>();
    if (seconds < kMinTokenSeconds || seconds > kMaxTokenSeconds) {
      return InvalidArgumentError(fmt::format(
          "spec.expirationSeconds: Invalid value: {}: may not specify a duration {} than {}",
          seconds, seconds < kMinTokenSeconds ? "less" : "larger",
          seconds < kMinTokenSeconds ? "10 minutes" : "2^32 seconds"));
    }
  }
  Result<Json> account = store.Get({"ServiceAccount", namespace_, name});
  if (!account.ok()) return NotFoundError(fmt::format("serviceaccounts {:?} not found", name));
  ASSIGN_OR_RETURN(Json bound, BoundObject(store, namespace_, request));
  if (bound.is_object() && bound["claim"] == "pod") {
    Result<Json> pod = store.Get({"Pod", namespace_, bound["name"].get<std::string>()});
    std::string runs_as = pod.ok() ? api::StringAt(*pod, {"spec", "serviceAccountName"}) : "";
    if (runs_as.empty()) runs_as = "default";
    if (runs_as != name) {
      return FailedPreconditionError(
          fmt::format("cannot bind token for serviceaccount {:?} to pod running with different "
                      "serviceaccount name.",
                      name));
    }
  }
  std::vector<std::string> audiences = Strings(api::FindAt(request, {"spec", "audiences"}));
  if (audiences.empty()) audiences = {kTokenIssuer};
  Json facts = {
      {"namespace", namespace_},
      {"serviceaccount", {{"name", name}, {"uid", api::StringAt(*account, {"metadata", "uid"})}}}};
  if (!bound.is_null()) {
    facts[bound["claim"].get<std::string>()] = {{"name", bound["name"]}, {"uid", bound["uid"]}};
  }
  Json claims = {{"aud", audiences},
                 {"exp", Seconds(now) + seconds},
                 {"iat", Seconds(now)},
                 {"nbf", Seconds(now)},
                 {"iss", kTokenIssuer},
                 {kClaims, facts},
                 {"sub", fmt::format("system:serviceaccount:{}:{}", namespace_, name)}};
  std::string payload =
      Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})") + "." + Base64UrlEncode(claims.dump());
  Json answer = request;
  answer["apiVersion"] = "authentication.k8s.io/v1";
  answer["kind"] = "TokenRequest";
  answer["metadata"] = {
      {"name", name}, {"namespace", namespace_}, {"creationTimestamp", FormatRfc3339(now)}};
  answer["spec"]["audiences"] = audiences;
  answer["spec"]["expirationSeconds"] = seconds;
  answer["status"] = {{"token", payload + "." + Sign(payload)},
                      {"expirationTimestamp", FormatRfc3339(now + std::chrono::seconds(seconds))}};
  return answer;
}

Json ServiceAccountTokens::Review(const store::ObjectReader& store, const Json& review,
                                  TimePoint now) const {
  std::string token = api::StringAt(review, {"spec", "token"});
  std::vector<std::string> parts = SplitNonEmpty(token, '.');
  if (parts.size() != 3 || token.find("..") != std::string::npos) {
    return Unauthenticated(review, "not a JWT");
  }
  std::string payload = parts[0] + "." + parts[1];
  std::string mac = Sign(payload);
  if (mac.size() != parts[2].size() ||
      CRYPTO_memcmp(mac.data(), parts[2].data(), mac.size()) != 0) {
    return Unauthenticated(review, "not signed by this server's key");
  }
  std::optional<std::string> text = Base64UrlDecode(parts[1]);
  Result<Json> claims = text ? api::ParseJsonValue(*text, "claims") : Result<Json>(Json());
  if (!claims.ok() || !claims->is_object())
    return Unauthenticated(review, "its claims are no JSON object");
  const Json& c = *claims;
  if (api::IntAt(c, {"exp"}) <= Seconds(now) || api::IntAt(c, {"nbf"}) > Seconds(now)) {
    return Unauthenticated(review, "Token has expired.");
  }
  std::vector<std::string> held = Strings(api::FindAt(c, {"aud"}));
  std::vector<std::string> asked = Strings(api::FindAt(review, {"spec", "audiences"}));
  if (asked.empty()) asked = {kTokenIssuer};
  std::vector<std::string> both;
  for (const std::string& a : asked) {
    if (std::find(held.begin(), held.end(), a) != held.end()) both.push_back(a);
  }
  if (both.empty()) {
    return Unauthenticated(review, fmt::format("token audiences {} is invalid for the target "
                                               "audiences {}",
                                               Quoted(held), Quoted(asked)));
  }
  std::string ns = api::StringAt(c, {kClaims, "namespace"});
  std::string account = api::StringAt(c, {kClaims, "serviceaccount", "name"});
  std::string account_uid = api::StringAt(c, {kClaims, "serviceaccount", "uid"});
  if (!Same(store, {"ServiceAccount", ns, account}, account_uid)) {
    return Unauthenticated(review, "the service account has been deleted or replaced");
  }
  Json user = {
      {"username", fmt::format("system:serviceaccount:{}:{}", ns, account)},
      {"uid", account_uid},
      {"groups",
       {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}};
  if (const Json* pod = api::FindAt(c, {kClaims, "pod"}); pod != nullptr && pod->is_object()) {
    std::string pod_name = api::StringAt(*pod, "name");
    std::string pod_uid = api::StringAt(*pod, "uid");
    if (!Same(store, {"Pod", ns, pod_name}, pod_uid)) {
      return Unauthenticated(review, "the pod has been deleted or replaced");
    }
    user["extra"] = {{"authentication.kubernetes.io/pod-name", {pod_name}},
                     {"authentication.kubernetes.io/pod-uid", {pod_uid}}};
  }
  if (const Json* secret = api::FindAt(c, {kClaims, "secret"});
      secret != nullptr && secret->is_object() &&
      !Same(store, {"Secret", ns, api::StringAt(*secret, "name")}, api::StringAt(*secret, "uid"))) {
    return Unauthenticated(review, "the secret has been deleted or replaced");
  }
  return Answered(review, {{"authenticated", true}, {"user", user}, {"audiences", both}});
}

}  // namespace trainyard::server
