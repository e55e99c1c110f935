// A client of `trainyard server` for the CLI's own verbs (apply, get, logs,
// ...). Where the server is: --server, else $TRAINYARD_SERVER, else the
// kubeconfig the server wrote (<home>/kubeconfig), which also gives the
// token and the certificate to trust.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/json.h"
#include "common/status.h"

namespace httplib {
class Client;
}

namespace trainyard::cli {

// Where the server is: a finished run's folder (--run) served from this
// process, or a server found as kubectl finds it: --server (or
// $TRAINYARD_SERVER), else --kubeconfig, else <--home>/kubeconfig when
// --home is given, else the first file of $KUBECONFIG that exists, else
// the default home's kubeconfig.
struct ClientOptions {
  std::string run;         // a finished `trainyard run`'s folder, read back
  std::string server;      // URL
  std::string kubeconfig;  // a kubeconfig file
  std::string home;        // a home whose kubeconfig names its server
  std::string token;       // empty: the kubeconfig's
};

struct ApiAnswer {
  int code = 0;
  api::Json body;  // JSON bodies parsed; others as a string
  // "NotFound: pytorchjobs.kubeflow.org \"x\" not found" for a Status.
  std::string Error() const;
  bool ok() const { return code >= 200 && code < 300; }
};

class RunReader;

class ApiClient {
 public:
  static Result<std::unique_ptr<ApiClient>> Connect(const ClientOptions& options);
  ~ApiClient();

  // UNAVAILABLE when the server cannot be reached, with where it looked.
  Result<ApiAnswer> Get(const std::string& path, bool table = false);
  Result<ApiAnswer> Send(const std::string& method, const std::string& path, const api::Json& body,
                         const std::string& content_type = "application/json");
  // Streams a response body to `sink` as it comes (logs -f); sink returns
  // false to stop.
  Status Stream(const std::string& path, const std::function<bool(std::string_view)>& sink);

  const std::string& url() const { return url_; }

 private:
  ApiClient() = default;
  std::string url_;
  std::unique_ptr<httplib::Client> http_;
  std::unique_ptr<RunReader> run_;  // serving --run, for as long as the client lives
};

}  // namespace trainyard::cli
