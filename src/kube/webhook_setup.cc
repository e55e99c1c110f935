#include "kube/webhook_setup.h"

#include <fmt/format.h>

#include "common/strings.h"
#include "kube/certs.h"

namespace trainyard::kube {
namespace {

std::optional<ServingCertificate> FromSecret(const api::Json& secret) {
  ServingCertificate out;
  for (auto [key, field] : {std::pair{"ca.crt", &out.ca_pem}, std::pair{"tls.crt", &out.cert_pem},
                            std::pair{"tls.key", &out.key_pem}}) {
    std::optional<std::string> value = Base64Decode(api::StringAt(secret, {"data", key}));
    if (!value || value->empty()) return std::nullopt;
    *field = std::move(*value);
  }
  return out;
}

}  // namespace

Result<ServingCertificate> EnsureWebhookCertificate(const WebhookSetupOptions& options) {
  std::string service = options.service_name + "." + options.namespace_ + ".svc";
  std::vector<std::string> names = {service, service + ".cluster.local"};
  Result<api::Json> secret = options.client->Get("Secret", options.namespace_, options.secret_name);
  if (secret.ok()) {
    if (std::optional<ServingCertificate> held = FromSecret(*secret)) {
      // Renewed well before it expires, as upstream's cert-controller does
      // (certificates last ten years; an operator restarts far sooner).
      std::optional<std::string> problem =
          CertificateProblem(*held, names, options.now_seconds(), kRenewBeforeSeconds);
      if (!problem) return *held;
      options.log->Info("trainyard operator: the webhook certificate in Secret {} is made anew: {}",
                        options.secret_name, *problem);
    }
  } else if (secret.status().code() != StatusCode::kNotFound) {
    return secret.status();
  }
  ASSIGN_OR_RETURN(ServingCertificate made, MakeServingCertificate(names));
  api::Json data = {{"ca.crt", Base64Encode(made.ca_pem)},
                    {"tls.crt", Base64Encode(made.cert_pem)},
                    {"tls.key", Base64Encode(made.key_pem)}};
  Result<api::Json> stored = NotFoundError("");
  if (secret.ok()) {
    (*secret)["data"] = data;
    stored = options.client->Update(*secret);
  } else {
    stored = options.client->Create(
        {{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"metadata", {{"name", options.secret_name}, {"namespace", options.namespace_}}},
         {"data", data}});
  }
  // Another replica stored one first: that one is everyone's.
  if (stored.status().code() == StatusCode::kAlreadyExists ||
      stored.status().code() == StatusCode::kAborted) {
    ASSIGN_OR_RETURN(api::Json theirs,
                     options.client->Get("Secret", options.namespace_, options.secret_name));
    if (std::optional<ServingCertificate> held = FromSecret(theirs)) return *held;
    return Status(StatusCode::kAborted, "the webhook certificate Secret is being written");
  }
  RETURN_IF_ERROR(stored.status());
  return made;
}

Status TrustCertificate(const WebhookSetupOptions& options, const std::string& ca_pem) {
  std::string bundle = Base64Encode(ca_pem);
  std::vector<std::string> missing;
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    Result<api::Json> config = options.client->Get(kind, "", options.configuration_name);
    if (config.status().code() == StatusCode::kNotFound) {
      missing.push_back(fmt::format("{} {}", kind, options.configuration_name));
      continue;
    }
    RETURN_IF_ERROR(config.status());
    bool changed = false;
    for (api::Json& webhook : (*config)["webhooks"]) {
      if (!webhook.is_object()) continue;
      if (api::StringAt(webhook, {"clientConfig", "caBundle"}) == bundle) continue;
      webhook["clientConfig"]["caBundle"] = bundle;
      changed = true;
    }
    if (changed) RETURN_IF_ERROR(options.client->Update(*config).status());
  }
  if (!missing.empty()) {
    return NotFoundError(fmt::format(
        "no {} installed (`trainyard manifests webhooks | kubectl apply -f -`): the API server "
        "does not call the webhooks",
        Join(missing, " or ")));
  }
  return OkStatus();
}

}  // namespace trainyard::kube
