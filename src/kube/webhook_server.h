// The HTTPS server of the operator's admission webhooks: POST
// /mutate-kubeflow-org-v1-<kind> and /validate-kubeflow-org-v1-<kind>
// answered by admission.h, with a certificate held in memory. Requests
// are bounded as kube-apiserver bounds its own (3 MiB; JSON nesting as the
// codec's). Threads: cpp-httplib's pool, started by Start().
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "kube/certs.h"

namespace httplib {
class SSLServer;
}

namespace trainyard::kube {

// An HTTPS server holding `certificate` in memory, bounded as the webhooks'
// (`max_request_bytes`, a 30 s read timeout), not yet listening.
Result<std::unique_ptr<httplib::SSLServer>> MakeTlsServer(const ServingCertificate& certificate,
                                                          size_t max_request_bytes);
// Binds `server` to `address`:`port` (0: any free port); the port, or why
// not, saying `what` it serves.
Result<int> BindServer(httplib::SSLServer& server, const std::string& address, int port,
                       const char* what);

class WebhookServer {
 public:
  WebhookServer();
  ~WebhookServer();

  // Listens on `address`:`port` (0: any free port) with `certificate`;
  // returns the port.
  Result<int> Start(const ServingCertificate& certificate, const std::string& address, int port);
  void Stop();

 private:
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
};

}  // namespace trainyard::kube
