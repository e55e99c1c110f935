#include "kube/pem.h"

#include <openssl/bio.h>
#include <openssl/pem.h>

namespace trainyard::kube {
namespace {

struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio MemoryBio(std::string_view pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

CertificatePtr ReadCertificate(std::string_view pem) {
  Bio in = MemoryBio(pem);
  return CertificatePtr(PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
}

std::vector<CertificatePtr> ReadCertificates(std::string_view pem) {
  Bio in = MemoryBio(pem);
  std::vector<CertificatePtr> out;
  while (X509* cert = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr)) {
    out.emplace_back(cert);
  }
  return out;
}

PrivateKeyPtr ReadPrivateKey(std::string_view pem) {
  Bio in = MemoryBio(pem);
  return PrivateKeyPtr(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
}

}  // namespace trainyard::kube
