#include "kube/webhook_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <cstring>

#include "api/kinds.h"
#include "api/yaml.h"
#include "common/listen.h"
#include "kube/admission.h"
#include "kube/pem.h"

namespace trainyard::kube {
namespace {

constexpr size_t kMaxRequestBytes = 3 * 1024 * 1024;  // kube-apiserver's own limit

void Answer(const httplib::Request& req, httplib::Response& res, bool mutate) {
  Result<api::Json> review = api::ParseJsonValue(req.body, "AdmissionReview");
  if (!review.ok() || !review->is_object()) {
    res.status = 400;
    res.set_content(review.ok() ? "an AdmissionReview is an object" : review.status().message(),
                    "text/plain");
    return;
  }
  // An answer that throws would leave the API server waiting out its
  // timeout, and with failurePolicy Fail refuse the object: refused at
  // once, with the reason, instead.
  api::Json answer;
  try {
    answer = AnswerAdmission(*review, mutate);
  } catch (const std::exception& e) {
    answer = {
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"response",
         {{"uid", api::StringAt(*review, {"request", "uid"})},
          {"allowed", false},
          {"status", {{"code", 400}, {"message", fmt::format("cannot read it: {}", e.what())}}}}}};
  }
  res.set_content(answer.dump(), "application/json");
}

}  // namespace

WebhookServer::WebhookServer() = default;

WebhookServer::~WebhookServer() { Stop(); }

Result<std::unique_ptr<httplib::SSLServer>> MakeTlsServer(const ServingCertificate& certificate,
                                                          size_t max_request_bytes) {
  CertificatePtr cert = ReadCertificate(certificate.cert_pem);
  PrivateKeyPtr key = ReadPrivateKey(certificate.key_pem);
  std::unique_ptr<httplib::SSLServer> server;
  if (cert && key) {
    // The server's TLS context takes its own references.
    server = std::make_unique<httplib::SSLServer>(cert.get(), key.get());
  }
  if (!server || !server->is_valid()) {
    return InternalError("the serving certificate and key do not make a TLS server");
  }
  server->set_payload_max_length(max_request_bytes);
  server->set_read_timeout(std::chrono::seconds(30));
  server->set_socket_options(SetExclusiveListenOptions);
  return server;
}

Result<int> BindServer(httplib::SSLServer& server, const std::string& address, int port,
                       const char* what) {
  int bound = port == 0 ? server.bind_to_any_port(address)
                        : (server.bind_to_port(address, port) ? port : -1);
  if (bound < 0) {
    return UnavailableError(fmt::format("cannot listen on {}:{} for {}: {}", address, port, what,
                                        std::strerror(errno)));
  }
  return bound;
}

Result<int> WebhookServer::Start(const ServingCertificate& certificate, const std::string& address,
                                 int port) {
  ASSIGN_OR_RETURN(server_, MakeTlsServer(certificate, kMaxRequestBytes));
  for (const api::ResourceType* type : AdmittedKinds()) {
    for (bool mutate : {true, false}) {
      server_->Post(WebhookPath(type->kind, mutate),
                    [mutate](const httplib::Request& req, httplib::Response& res) {
                      Answer(req, res, mutate);
                    });
    }
  }
  ASSIGN_OR_RETURN(int bound, BindServer(*server_, address, port, "the admission webhooks"));
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void WebhookServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainyard::kube
