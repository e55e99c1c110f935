#include "cli/local_api.h"

#include <fmt/format.h>
#include <signal.h>

#include <filesystem>
#include <random>

#include "common/clock.h"

namespace trainyard::cli {
namespace {

// A token no one can guess: 128 bits from the kernel.
std::string RandomToken() {
  std::random_device random;  // /dev/urandom on Linux
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", random(), random(), random(), random());
}

}  // namespace

LocalApi::LocalApi(engine::Engine& engine, bool read_back)
    : token_(RandomToken()),
      auth_(*server::Authorizer::Parse(token_ + " run *\n")),
      backend_(engine, FormatRfc3339(RealClock::Get().Now()), "", read_back),
      handler_(backend_, RealClock::Get(), &auth_),
      http_(handler_, {.address = "127.0.0.1", .port = 0}) {}

LocalApi::~LocalApi() {
  if (!serving_.joinable()) return;
  http_.Stop();
  serving_.join();
}

Result<std::string> LocalApi::Start(engine::Engine& engine) {
  ASSIGN_OR_RETURN(int port, http_.Bind());
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-answer is the write's error, not ours
  std::string url = fmt::format("http://127.0.0.1:{}", port);
  engine.SetApi(url);
  serving_ = std::thread([this] { http_.Serve(); });
  return url;
}

std::string LocalApi::DashboardUrl(const std::string& url) const {
  return fmt::format("{}/#/jobs?token={}", url, token_);
}

Result<std::unique_ptr<RunReader>> RunReader::Open(const std::string& run_dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(run_dir) / "state.db", ec)) {
    return NotFoundError(fmt::format(
        "{} holds no run (no state.db): give the folder `trainyard run` named as \"state and "
        "logs\"",
        run_dir));
  }
  std::unique_ptr<RunReader> reader(new RunReader());
  // API-only: its store is read as a server's, and nothing is run again.
  ASSIGN_OR_RETURN(reader->engine_,
                   engine::Engine::Create({.state_dir = run_dir, .api_only = true}));
  reader->api_ = std::make_unique<LocalApi>(*reader->engine_, /*read_back=*/true);
  ASSIGN_OR_RETURN(reader->url_, reader->api_->Start(*reader->engine_));
  return reader;
}

}  // namespace trainyard::cli
