// Self-managed serving certificates for the operator's webhooks, as
// upstream's pkg/cert makes them: a CA of its own and a certificate it
// signs for the webhook Service's DNS names (RSA 2048, SHA-256, ten years),
// as PEM. OpenSSL does the cryptography.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::kube {

struct ServingCertificate {
  std::string ca_pem;    // what the webhook configurations trust (caBundle)
  std::string cert_pem;  // the server's, signed by the CA
  std::string key_pem;   // the server's private key
};

// `dns_names`: the first is also the certificate's common name.
Result<ServingCertificate> MakeServingCertificate(const std::vector<std::string>& dns_names);

// Why `held` must be made anew, or nullopt when it serves: it does not
// parse, its key is not the certificate's, the CA did not sign it, it does
// not name every one of `dns_names`, or either certificate expires within
// `lookahead` of `now_seconds` (seconds since the epoch).
std::optional<std::string> CertificateProblem(const ServingCertificate& held,
                                              const std::vector<std::string>& dns_names,
                                              int64_t now_seconds, int64_t lookahead_seconds);

}  // namespace trainyard::kube
