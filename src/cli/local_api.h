// The API on loopback for an engine of this process: `trainyard run`'s
// (for Push trials, MLflow and the dashboard) and a finished run's, read
// back (`--run DIR`). It takes a token made for it alone, so that no other
// user of the machine, nor a web page, can reach what runs as this user;
// replicas reach their own trial's or job's metrics with their uid, as on
// a server.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "cli/engine_backend.h"
#include "common/status.h"
#include "engine/engine.h"
#include "server/auth.h"
#include "server/handler.h"
#include "server/http_server.h"

namespace trainyard::cli {

class LocalApi {
 public:
  // `read_back`: the engine is a finished run's, read back (EngineBackend).
  explicit LocalApi(engine::Engine& engine, bool read_back = false);
  ~LocalApi();
  LocalApi(const LocalApi&) = delete;
  LocalApi& operator=(const LocalApi&) = delete;

  // Serves on 127.0.0.1 at a free port; the URL it serves at.
  Result<std::string> Start(engine::Engine& engine);
  const std::string& token() const { return token_; }
  // The dashboard, its token in the URL (the page keeps it and takes it
  // out of the address bar).
  std::string DashboardUrl(const std::string& url) const;

 private:
  std::string token_;
  server::Authorizer auth_;
  EngineBackend backend_;
  server::ApiHandler handler_;
  server::HttpServer http_;
  std::thread serving_;
};

// A finished `trainyard run`'s jobs, served from its folder: its store
// opened as an API-only engine (nothing runs), behind a LocalApi.
class RunReader {
 public:
  // NOT_FOUND when `run_dir` holds no run's state.
  static Result<std::unique_ptr<RunReader>> Open(const std::string& run_dir);
  const std::string& url() const { return url_; }
  const std::string& token() const { return api_->token(); }

 private:
  RunReader() = default;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<LocalApi> api_;
  std::string url_;
};

}  // namespace trainyard::cli
