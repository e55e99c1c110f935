#include "kube/certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "common/strings.h"
#include "kube/pem.h"

namespace trainyard::kube {
namespace {

constexpr long kValidSeconds = 10L * 365 * 24 * 3600;

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

// A certificate for `key` named `common_name`, signed by `issuer` with
// `issuer_key` (itself when both are null), with `extensions`.
Result<Cert> MakeCertificate(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                             EVP_PKEY* issuer_key,
                             const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new());
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;  // a positive serial number
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_set_version(cert.get(), 2);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // a little clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValidSeconds);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  for (const auto& [nid, value] : extensions) {
    if (!AddExtension(cert.get(), signer, nid, value)) {
      return InternalError("cannot add a certificate extension: " + value);
    }
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return InternalError("cannot sign the certificate");
  }
  return cert;
}

std::string Pem(X509* cert) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string Pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// Whether `cert` is still valid `lookahead` after `now`.
bool ValidUntil(X509* cert, int64_t now, int64_t lookahead) {
  time_t at = static_cast<time_t>(now + lookahead);
  return X509_cmp_time(X509_get0_notAfter(cert), &at) > 0;
}

}  // namespace

std::optional<std::string> CertificateProblem(const ServingCertificate& held,
                                              const std::vector<std::string>& dns_names,
                                              int64_t now_seconds, int64_t lookahead_seconds) {
  CertificatePtr ca = ReadCertificate(held.ca_pem);
  CertificatePtr cert = ReadCertificate(held.cert_pem);
  PrivateKeyPtr key = ReadPrivateKey(held.key_pem);
  if (!ca || !cert || !key) return "it does not parse as PEM";
  if (X509_check_private_key(cert.get(), key.get()) != 1) return "its key is not the certificate's";
  EVP_PKEY* ca_public = X509_get0_pubkey(ca.get());
  if (ca_public == nullptr || X509_verify(cert.get(), ca_public) != 1) {
    return "its CA did not sign it";
  }
  for (const std::string& name : dns_names) {
    if (X509_check_host(cert.get(), name.data(), name.size(), 0, nullptr) != 1) {
      return "it does not name " + name;
    }
  }
  if (!ValidUntil(cert.get(), now_seconds, lookahead_seconds) ||
      !ValidUntil(ca.get(), now_seconds, lookahead_seconds)) {
    return "it expires within " + std::to_string(lookahead_seconds / 86400) + " days";
  }
  return std::nullopt;
}

Result<ServingCertificate> MakeServingCertificate(const std::vector<std::string>& dns_names) {
  if (dns_names.empty()) return InvalidArgumentError("a serving certificate needs a DNS name");
  Key ca_key(EVP_RSA_gen(2048));
  Key key(EVP_RSA_gen(2048));
  if (!ca_key || !key) return InternalError("cannot make an RSA key");
  ASSIGN_OR_RETURN(Cert ca, MakeCertificate(ca_key.get(), "trainyard-operator-ca", nullptr, nullptr,
                                            {{NID_basic_constraints, "critical,CA:TRUE"},
                                             {NID_key_usage, "critical,keyCertSign,cRLSign"}}));
  std::vector<std::string> sans;
  for (const std::string& n : dns_names) sans.push_back("DNS:" + n);
  ASSIGN_OR_RETURN(Cert cert,
                   MakeCertificate(key.get(), dns_names[0], ca.get(), ca_key.get(),
                                   {{NID_basic_constraints, "critical,CA:FALSE"},
                                    {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                    {NID_ext_key_usage, "serverAuth"},
                                    {NID_subject_alt_name, Join(sans, ",")}}));
  return ServingCertificate{
      .ca_pem = Pem(ca.get()), .cert_pem = Pem(cert.get()), .key_pem = Pem(key.get())};
}

}  // namespace trainyard::kube
