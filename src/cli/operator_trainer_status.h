// The operator's TrainJob status server (Kubeflow Trainer v2.2, KEP-2779),
// where upstream's is: HTTPS on --trainer-status-port (10443) with the
// webhooks' certificate, every replica alike. A trainer pod posts
// `{"trainerStatus": {...}}` to `/apis/trainer.kubeflow.org/v1alpha1/
// namespaces/<ns>/trainjobs/<name>/status` with the service account token
// the kubelet made it for that TrainJob's audience
// (controller/trainjob_status_endpoint.h). The token is checked by the API
// server (a TokenReview for that audience, remembered until it expires or
// for 10 minutes; a token that says it is for another audience or has
// expired is refused without asking), its
// service account must be of the TrainJob's namespace, and, beyond
// upstream (as the KEP meant), a token bound to a pod must be one of the
// TrainJob's own pods'. The report is checked as the CRD checks it and
// written over the last (status subresource). Answers as upstream's and
// trainyard server's own endpoint (server/trainer_status.cc): the report
// back (200), 403, 404, 413, 422, and 429 beyond a few a second per job.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kube/certs.h"
#include "kube/kube_client.h"
#include "server/push_limiter.h"

namespace httplib {
class SSLServer;
}

namespace trainyard::cli {

class TrainerStatusServer {
 public:
  // `client`: the operator's own for these requests (reviews and writes
  // wait on its limits, not the reconciler's).
  TrainerStatusServer(kube::KubeClient& client, const Clock& clock = RealClock::Get());
  ~TrainerStatusServer();

  Result<int> Start(const kube::ServingCertificate& certificate, const std::string& address,
                    int port);
  void Stop();

  struct Answer {
    int code = 200;
    std::string body;  // JSON
  };
  // One request: `authorization` is its Authorization header.
  Answer Handle(const std::string& method, const std::string& path,
                const std::string& authorization, const std::string& body);

 private:
  // Whether `token` may report for the TrainJob; a 403 or 500 if not.
  std::optional<Answer> Refusal(const std::string& token, const std::string& namespace_,
                                const std::string& name);
  // Asks the API server; the refusal, if any.
  std::optional<Answer> Review(const std::string& token, const std::string& namespace_,
                               const std::string& name);
  Answer Write(const std::string& namespace_, const std::string& name, const api::Json& status);

  kube::KubeClient& client_;
  const Clock& clock_;
  server::PushLimiter pushes_;
  // Reviews of tokens not yet known, per TrainJob and for all together: a
  // flood of bad tokens gets 429s rather than a queue on the client's
  // budget that would hold every handler thread (and good reports) behind
  // it; a token reviewed once is remembered until it expires (10 minutes
  // at most), so reporting goes on through such a flood.
  server::PushLimiter job_reviews_;
  server::PushLimiter reviews_;
  Mutex mu_;
  // Tokens the API server said yes to, for a TrainJob, until when.
  std::map<std::string, TimePoint> reviewed_ TRAINYARD_GUARDED_BY(mu_);
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
};

}  // namespace trainyard::cli
