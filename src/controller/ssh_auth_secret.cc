#include "controller/ssh_auth_secret.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/encoder.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <vector>

#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::controller {
namespace {

using EvpKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// SSH's wire string: a 32-bit big-endian length, then the bytes.
void AppendSshString(std::string& out, std::string_view bytes) {
  uint32_t n = static_cast<uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(bytes);
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// The key as SEC1 PEM ("EC PRIVATE KEY"), as Go's x509.MarshalECPrivateKey.
Result<std::string> PrivatePem(EVP_PKEY* key) {
  std::unique_ptr<OSSL_ENCODER_CTX, decltype(&OSSL_ENCODER_CTX_free)> encoder(
      OSSL_ENCODER_CTX_new_for_pkey(key, OSSL_KEYMGMT_SELECT_KEYPAIR, "PEM", "type-specific",
                                    nullptr),
      &OSSL_ENCODER_CTX_free);
  unsigned char* data = nullptr;
  size_t length = 0;
  if (encoder == nullptr || OSSL_ENCODER_to_data(encoder.get(), &data, &length) != 1) {
    return InternalError("cannot encode the MPI SSH key");
  }
  std::string pem(reinterpret_cast<char*>(data), length);
  OPENSSL_clear_free(data, length);
  return pem;
}

// The public half as an authorized_keys line: "ecdsa-sha2-nistp521 BASE64\n".
Result<std::string> AuthorizedKey(EVP_PKEY* key) {
  std::vector<unsigned char> point(256);
  size_t length = 0;
  if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size(),
                                      &length) != 1) {
    return InternalError("cannot read the MPI SSH key's public point");
  }
  std::string blob;
  AppendSshString(blob, "ecdsa-sha2-nistp521");
  AppendSshString(blob, "nistp521");
  AppendSshString(blob, std::string_view(reinterpret_cast<char*>(point.data()), length));
  return "ecdsa-sha2-nistp521 " + Base64(blob) + "\n";
}

}  // namespace

std::string SshAuthSecretName(const TrainJobSource& job) { return job.meta.name + "-mpi-ssh-auth"; }

Result<api::Json> BuildSshAuthSecret(const TrainJobSource& job) {
  EvpKey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-521"), &EVP_PKEY_free);
  if (key == nullptr) return InternalError("cannot make an ECDSA P-521 key for the MPI runtime");
  ASSIGN_OR_RETURN(std::string private_pem, PrivatePem(key.get()));
  ASSIGN_OR_RETURN(std::string public_line, AuthorizedKey(key.get()));
  return api::Json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", SshAuthSecretName(job)},
        {"namespace", job.meta.namespace_},
        {"ownerReferences", api::Json::array({OwnerReferenceTo(job)})}}},
      {"type", "kubernetes.io/ssh-auth"},
      {"immutable", true},
      {"data", {{"ssh-privatekey", Base64(private_pem)}, {"ssh-publickey", Base64(public_line)}}}};
}

}  // namespace trainyard::controller
