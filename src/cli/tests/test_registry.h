// A registry for the images tests: Debian's docker-registry on loopback
// with htpasswd auth (alice), and an image built from busybox-static with
// umoci (two layers, the second deleting a file of the first; ENTRYPOINT,
// CMD, ENV and WORKDIR set), pushed with skopeo. Started once per test
// binary, on first use, and stopped at its exit.
#pragma once

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/tests/operator_fixture.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "runtime/local/process.h"

namespace trainyard::cli::testing {

namespace fs = std::filesystem;

namespace registry_internal {

inline bool Have(const char* program) {
  return system(fmt::format("command -v {} >/dev/null", program).c_str()) == 0;
}

// Runs `argv`, failing the test when it fails.
inline std::string MustRun(const std::vector<std::string>& argv) {
  Result<ToolRun> run = RunTool(argv);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run.ok() ? run->exit_code : -1, 0) << Join(argv, " ") << ":\n"
                                               << (run.ok() ? run->output : "");
  return run.ok() ? run->output : "";
}

inline bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace registry_internal

class TestRegistry {
 public:
  // What a test needs that this machine may lack; "" when it has it all.
  static std::string Missing() {
    using registry_internal::Have;
    if (!Have("docker-registry")) return "docker-registry";
    if (!Have("umoci") || !Have("skopeo")) return "umoci and skopeo";
    if (!Have("htpasswd")) return "apache2-utils";
    if (!std::filesystem::exists("/bin/busybox")) return "busybox-static";
    return "";
  }
  // The registry, started on first use; nullptr when it could not start.
  static TestRegistry* Get() {
    static TestRegistry* registry = [] {
      static TestRegistry made;
      return made.Start() ? &made : nullptr;
    }();
    return registry;
  }

  int port() const { return port_; }
  std::string Auth() const { return (suite_ / "auth.json").string(); }
  std::string RegistriesConf() const { return (suite_ / "registries.conf").string(); }
  // 127.0.0.1:<port>/team/app:<tag>; v1 is the image pushed.
  std::string Image(const std::string& tag) const {
    return fmt::format("127.0.0.1:{}/team/app:{}", port_, tag);
  }

 private:
  // Starts the registry and pushes the image; false when it could not
  // (a test failure says why).
  bool Start() {
    suite_ = fs::temp_directory_path() / fmt::format("trainyard-images-e2e-{}", getpid());
    fs::remove_all(suite_);
    fs::create_directories(suite_);
    port_ = FreePort();
    registry_internal::MustRun(
        {"sh", "-c", fmt::format("htpasswd -Bbn alice s3cret > {}/htpasswd", suite_.string())});
    std::ofstream(suite_ / "registry.yml") << fmt::format(
        "version: 0.1\nlog: {{level: error}}\nstorage: {{filesystem: {{rootdirectory: "
        "{0}/data}}}}\n"
        "http: {{addr: 127.0.0.1:{1}}}\nauth: {{htpasswd: {{realm: test, path: {0}/htpasswd}}}}\n",
        suite_.string(), port_);
    std::ofstream(suite_ / "registries.conf")
        << fmt::format("[[registry]]\nlocation = \"127.0.0.1:{}\"\ninsecure = true\n", port_);
    std::ofstream(suite_ / "auth.json")
        << fmt::format(R"({{"auths": {{"127.0.0.1:{}": {{"auth": "{}"}}}}}})", port_,
                       Base64Encode("alice:s3cret"));
    Result<runtime::Process> registry = runtime::Process::Start(
        {.argv = {"docker-registry", "serve", (suite_ / "registry.yml").string()},
         .env = {{"PATH", "/usr/bin:/bin"}},
         .log_path = (suite_ / "registry.log").string()});
    if (!registry.ok()) {
      ADD_FAILURE() << registry.status().ToString();
      return false;
    }
    registry_.emplace(*std::move(registry));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!registry_internal::Accepts(port_) && std::chrono::steady_clock::now() < deadline) {
      if (registry_->WaitFor(std::chrono::milliseconds(20)).has_value()) {
        ADD_FAILURE() << "docker-registry ended at once";
        return false;
      }
    }
    BuildAndPush();
    return !::testing::Test::HasFailure();
  }
  ~TestRegistry() {
    if (registry_) registry_->Stop(std::chrono::seconds(5));
    if (!suite_.empty()) fs::remove_all(suite_);
  }

  // 127.0.0.1:<port>/team/app:v1: /bin/busybox and /app/run.sh in the
  // base layer, /app/old in it too and deleted by the second; :user; and
  // :docker and :zstd, v1 as other tools push it.
  void BuildAndPush() {
    std::string layout = (suite_ / "layout").string();
    std::string bundle = (suite_ / "bundle").string();
    registry_internal::MustRun({"umoci", "init", "--layout", layout});
    registry_internal::MustRun({"umoci", "new", "--image", layout + ":v1"});
    registry_internal::MustRun(
        {"umoci", "unpack", "--rootless", "--image", layout + ":v1", bundle});
    fs::path rootfs = fs::path(bundle) / "rootfs";
    fs::create_directories(rootfs / "bin");
    fs::create_directories(rootfs / "app");
    fs::copy_file("/bin/busybox", rootfs / "bin/busybox");
    fs::create_symlink("busybox", rootfs / "bin/sh");
    std::ofstream(rootfs / "app/run.sh")
        << "echo hello from the image\n"
           "echo \"greeting=$GREETING extra=$EXTRA pwd=$(pwd)\"\n"
           "if [ -e /app/old ]; then echo old-present; else echo old-gone; fi\n"
           "echo kept > /data/scratch/mark && cat /data/scratch/mark\n";
    // Readable by the replica's user (nobody), whatever the umask.
    fs::permissions(rootfs / "app/run.sh", fs::perms(0755));
    std::ofstream(rootfs / "app/old") << "deleted above\n";
    registry_internal::MustRun({"umoci", "repack", "--image", layout + ":v1", bundle});
    std::string upper = (suite_ / "upper").string();
    registry_internal::MustRun({"umoci", "unpack", "--rootless", "--image", layout + ":v1", upper});
    fs::remove(fs::path(upper) / "rootfs/app/old");
    registry_internal::MustRun({"umoci", "repack", "--image", layout + ":v1", upper});
    registry_internal::MustRun({"umoci", "config", "--image", layout + ":v1", "--config.entrypoint",
                                "/bin/sh", "--config.cmd", "/app/run.sh", "--config.env",
                                "GREETING=hi", "--config.workingdir", "/app"});
    registry_internal::MustRun({"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds",
                                "alice:s3cret", "oci:" + layout + ":v1",
                                "docker://" + Image("v1")});
    BuildAndPushUser(layout);
    // v1 again as `docker push` writes it (Docker's v2 schema 2 manifest and
    // media types), and with zstd-compressed layers, as newer builders do.
    registry_internal::MustRun({"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds",
                                "alice:s3cret", "--format", "v2s2", "oci:" + layout + ":v1",
                                "docker://" + Image("docker")});
    // Recompressed in a layout of its own: pushed straight, the registry's
    // gzip blobs of the same layers would be reused instead.
    std::string zstd = (suite_ / "zstd").string();
    registry_internal::MustRun({"skopeo", "copy", "--dest-compress-format", "zstd",
                                "oci:" + layout + ":v1", "oci:" + zstd + ":zstd"});
    registry_internal::MustRun({"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds",
                                "alice:s3cret", "oci:" + zstd + ":zstd",
                                "docker://" + Image("zstd")});
  }

  // :user, v1 with a user database naming app (1000:1000, home /home/app,
  // also in group video) and USER app.
  void BuildAndPushUser(const std::string& layout) {
    std::string bundle = (suite_ / "user").string();
    registry_internal::MustRun(
        {"umoci", "unpack", "--rootless", "--image", layout + ":v1", bundle});
    fs::path etc = fs::path(bundle) / "rootfs/etc";
    fs::create_directories(etc);
    std::ofstream(etc / "passwd") << "root:x:0:0:root:/root:/bin/sh\n"
                                     "app:x:1000:1000::/home/app:/bin/sh\n";
    std::ofstream(etc / "group") << "root:x:0:\napp:x:1000:\nvideo:x:44:app\n";
    for (const char* file : {"passwd", "group"}) fs::permissions(etc / file, fs::perms(0644));
    registry_internal::MustRun({"umoci", "repack", "--image", layout + ":user", bundle});
    registry_internal::MustRun(
        {"umoci", "config", "--image", layout + ":user", "--config.user", "app"});
    registry_internal::MustRun({"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds",
                                "alice:s3cret", "oci:" + layout + ":user",
                                "docker://" + Image("user")});
  }

  std::filesystem::path suite_;
  int port_ = 0;
  std::optional<runtime::Process> registry_;
};

}  // namespace trainyard::cli::testing
