// PEM text as OpenSSL objects, owned: one place reads certificates and
// keys (the webhook server's, a kubeconfig's client certificate and CA,
// a held webhook certificate being checked).
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string_view>
#include <vector>

namespace trainyard::kube {

struct OpenSslFree {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using CertificatePtr = std::unique_ptr<X509, OpenSslFree>;
using PrivateKeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree>;

// The first certificate in `pem`; null when there is none.
CertificatePtr ReadCertificate(std::string_view pem);
// Every certificate in `pem`, in order (a CA bundle).
std::vector<CertificatePtr> ReadCertificates(std::string_view pem);
// The private key in `pem`; null when there is none.
PrivateKeyPtr ReadPrivateKey(std::string_view pem);

}  // namespace trainyard::kube
