// Service account tokens, as kube-apiserver makes and checks them, for the
// clients that stand in for a cluster's parts against an API-only server:
// a kubelet asks for a pod's projected token (TokenRequest, `POST
// .../serviceaccounts/<name>/token`, `kubectl create token`), and a server
// that takes such tokens asks whether one is good (TokenReview, `POST
// /apis/authentication.k8s.io/v1/tokenreviews`), as the operator's TrainJob
// status server does. Tokens are JWTs with kube-apiserver's claims
// (issuer, audiences, expiry, `kubernetes.io` naming the namespace, the
// account and a bound pod), signed with a key of this server process's
// own (HMAC-SHA256): a restarted server takes none it made before, as a
// cluster whose signing key changed. A token stays good only while its
// account (and bound pod) is the same object it was made for. They are not
// credentials for the API itself (only --token-file's are). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::server {

// kube-apiserver's default issuer, and the audience of a token asked for
// without one.
inline constexpr char kTokenIssuer[] = "https://kubernetes.default.svc";
inline constexpr char kTokenReviewsPath[] = "/apis/authentication.k8s.io/v1/tokenreviews";

class ServiceAccountTokens {
 public:
  ServiceAccountTokens();  // a fresh random key

  // The TokenRequest `request` for the account `namespace_`/`name`,
  // answered (status.token, status.expirationTimestamp). NOT_FOUND for a
  // missing account or bound pod, INVALID_ARGUMENT for a bad request,
  // FAILED_PRECONDITION for a pod that runs as another account, with
  // kube-apiserver's words.
  Result<api::Json> Request(const store::ObjectReader& store, const std::string& namespace_,
                            const std::string& name, const api::Json& request, TimePoint now) const;

  // The TokenReview `review`, answered: status.authenticated with the user
  // and the audiences it holds of those asked, or status.error.
  api::Json Review(const store::ObjectReader& store, const api::Json& review, TimePoint now) const;

 private:
  std::string Sign(const std::string& payload) const;

  std::string key_;
};

}  // namespace trainyard::server
