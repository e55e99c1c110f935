// The operator's webhook certificate, self-managed as upstream's is: kept
// in a Secret of the operator's namespace (made by whichever replica comes
// first; the others read it, so all serve the same certificate), and
// trusted by the webhook configurations, whose caBundle the operator
// fills in.
#pragma once

#include <ctime>
#include <functional>
#include <string>

#include "common/log.h"
#include "kube/certs.h"
#include "kube/kube_client.h"

namespace trainyard::kube {

struct WebhookSetupOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  KubeClient* client = nullptr;
  std::string namespace_;  // the operator's
  std::string service_name = "trainyard-operator";
  std::string secret_name = "trainyard-operator-webhook-cert";
  // The Mutating- and ValidatingWebhookConfiguration to fill in.
  std::string configuration_name = "trainyard-operator";
  // Seconds since the epoch (a test's clock).
  std::function<int64_t()> now_seconds = [] { return static_cast<int64_t>(std::time(nullptr)); };
};

// A held certificate is made anew this long before it (or its CA) expires.
inline constexpr int64_t kRenewBeforeSeconds = 90LL * 24 * 3600;

// The certificate in the Secret; made for the Service's DNS names and
// stored first when the Secret does not hold one, or holds one that does
// not serve (kube::CertificateProblem: broken, for other names, or within
// kRenewBeforeSeconds of expiring).
Result<ServingCertificate> EnsureWebhookCertificate(const WebhookSetupOptions& options);

// Sets every webhook's clientConfig.caBundle of both configurations to
// `ca_pem`. NOT_FOUND, naming what is missing, when a configuration is not
// installed (the webhooks are then simply not called).
Status TrustCertificate(const WebhookSetupOptions& options, const std::string& ca_pem);

}  // namespace trainyard::kube
