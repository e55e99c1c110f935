#include "cli/operator_endpoints.h"

#include <fmt/format.h>
#include <httplib.h>

namespace trainyard::cli {

OperatorEndpoints::OperatorEndpoints() = default;

OperatorEndpoints::~OperatorEndpoints() { Stop(); }

Status OperatorEndpoints::Listen(httplib::Server& server, const std::string& address,
                                 const char* what) {
  size_t colon = address.rfind(':');
  std::string port_text = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError(
        fmt::format("{} address {:?}: want [host]:port, or 0 for none", what, address));
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  int port = std::stoi(port_text);
  int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) return UnavailableError(fmt::format("cannot listen on {} for {}", address, what));
  threads_.emplace_back([&server] { server.listen_after_bind(); });
  fmt::print(stderr, "trainyard operator: serving {} on {}:{}\n", what, host, bound);
  return OkStatus();
}

Status OperatorEndpoints::Start(const std::string& metrics_address,
                                const std::string& probe_address, const server::Metrics& metrics,
                                const store::ObjectReader& store, std::function<bool()> ready) {
  if (metrics_address != "0") {
    auto server = std::make_unique<httplib::Server>();
    server->Get("/metrics", [&metrics, &store](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.Render(store), "text/plain; version=0.0.4");
    });
    RETURN_IF_ERROR(Listen(*server, metrics_address, "metrics"));
    servers_.push_back(std::move(server));
  }
  if (probe_address != "0") {
    auto server = std::make_unique<httplib::Server>();
    server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    server->Get("/readyz",
                [ready = std::move(ready)](const httplib::Request&, httplib::Response& res) {
                  bool yes = ready();
                  res.status = yes ? 200 : 503;
                  res.set_content(yes ? "ok" : "not ready", "text/plain");
                });
    RETURN_IF_ERROR(Listen(*server, probe_address, "health probes"));
    servers_.push_back(std::move(server));
  }
  return OkStatus();
}

void OperatorEndpoints::Stop() {
  for (auto& server : servers_) server->stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  servers_.clear();
}

}  // namespace trainyard::cli
