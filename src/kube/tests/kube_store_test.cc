// KubeStore against a scripted API server (cpp-httplib's, over real HTTP):
// lists fill the cache, watches resume from the last resourceVersion seen
// (bookmarks included), a 410 relists and tells watchers what changed
// meanwhile, a stale event does not take the cache back, and writes are
// read back at once.
#include "kube/kube_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <thread>

namespace trainyard::kube {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

api::Json PodAt(const std::string& name, int rv) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"resourceVersion", std::to_string(rv)},
            {"ownerReferences", {{{"uid", "job-uid"}, {"kind", "PyTorchJob"}, {"name", "j"}}}}}},
          {"spec", {{"containers", {{{"name", "c"}}}}}}};
}

// Answers lists with `listed`, and each watch with the next scripted batch
// of event lines (then ends the stream); with none left, holds the watch
// open until there is one or the server stops.
class FakeApiServer {
 public:
  FakeApiServer() {
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.get_param_value("watch") != "true") {
        std::lock_guard lock(mu_);
        res.set_content(listed_.dump(), "application/json");
        return;
      }
      {
        std::lock_guard lock(mu_);
        watched_from_.push_back(req.get_param_value("resourceVersion"));
      }
      res.set_chunked_content_provider("application/json", [this](size_t, httplib::DataSink& sink) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !script_.empty(); });
        if (stopping_) return false;
        std::string batch;
        for (const api::Json& e : script_.front()) batch += e.dump() + "\n";
        script_.pop_front();
        lock.unlock();
        sink.write(batch.data(), batch.size());
        sink.done();
        return true;
      });
    });
    server_.Post("/api/v1/namespaces/ns/pods",
                 [](const httplib::Request& req, httplib::Response& res) {
                   api::Json pod = api::Json::parse(req.body);
                   pod["metadata"]["resourceVersion"] = "100";
                   res.status = 201;
                   res.set_content(pod.dump(), "application/json");
                 });
    server_.Put(
        "/api/v1/namespaces/ns/pods/a", [](const httplib::Request&, httplib::Response& res) {
          res.status = 409;
          res.set_content(
              R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})",
              "application/json");
        });
    server_.Get("/api/v1/namespaces/ns/pods/a",
                [](const httplib::Request&, httplib::Response& res) {
                  res.set_content(PodAt("a", 42).dump(), "application/json");
                });
    // As kube-apiserver deletes an unbound pod: at once, answering with
    // the pod as it was, marked, at its last resourceVersion (the watch's
    // DELETED event comes with a later one).
    server_.Delete("/api/v1/namespaces/ns/pods/b",
                   [](const httplib::Request&, httplib::Response& res) {
                     api::Json pod = PodAt("b", 6);
                     pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
                     pod["metadata"]["deletionGracePeriodSeconds"] = 0;
                     res.set_content(pod.dump(), "application/json");
                   });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeApiServer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }
  void List(std::vector<api::Json> items, int rv) {
    std::lock_guard lock(mu_);
    listed_ = {{"kind", "PodList"},
               {"metadata", {{"resourceVersion", std::to_string(rv)}}},
               {"items", items}};
  }
  void Script(std::vector<api::Json> events) {
    {
      std::lock_guard lock(mu_);
      script_.push_back(std::move(events));
    }
    cv_.notify_all();
  }
  std::vector<std::string> WatchedFrom() {
    std::lock_guard lock(mu_);
    return watched_from_;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  api::Json listed_;
  std::deque<std::vector<api::Json>> script_;
  std::vector<std::string> watched_from_;
  bool stopping_ = false;
};

// Waits (polling, 10 s at most) until `done` holds.
bool Eventually(const std::function<bool()>& done) {
  auto until = std::chrono::steady_clock::now() + seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class KubeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.List({PodAt("a", 5), PodAt("b", 6)}, 10);
    ClusterConfig config;
    config.server = api_.url();
    client_ = *KubeClient::Create(config, {.qps = 0});
    store_ =
        std::make_unique<KubeStore>(KubeStoreOptions{.client = client_.get(), .kinds = {"Pod"}});
  }
  void TearDown() override { store_->Stop(); }
  std::vector<std::string> Seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  void Collect() {
    ASSERT_TRUE(
        store_
            ->Watch(0,
                    [this](const store::WatchEvent& e) {
                      std::lock_guard lock(mu_);
                      std::string type = e.type == store::EventType::kAdded      ? "ADDED"
                                         : e.type == store::EventType::kModified ? "MODIFIED"
                                                                                 : "DELETED";
                      seen_.push_back(type + " " + api::StringAt(e.object, {"metadata", "name"}));
                    })
            .ok());
  }
  std::string VersionOf(const std::string& name) {
    Result<api::Json> pod = store_->Get({"Pod", "ns", name});
    return pod.ok() ? api::StringAt(*pod, {"metadata", "resourceVersion"}) : "missing";
  }

  FakeApiServer api_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<KubeStore> store_;
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST_F(KubeStoreTest, ListsThenFollowsResumingAndRelistingOnGone) {
  Collect();
  ASSERT_TRUE(store_->Start().ok());
  EXPECT_EQ(VersionOf("a"), "5");
  int owned = 0;
  ASSERT_TRUE(store_->ScanOwnedBy("Pod", "job-uid", [&](const api::Json&) { ++owned; }).ok());
  EXPECT_EQ(owned, 2);

  // A change, then a bookmark: the next watch resumes from the bookmark.
  api_.Script({{{"type", "MODIFIED"}, {"object", PodAt("a", 11)}},
               {{"type", "BOOKMARK"},
                {"object", {{"kind", "Pod"}, {"metadata", {{"resourceVersion", "15"}}}}}}});
  ASSERT_TRUE(Eventually([&] { return api_.WatchedFrom().size() == 2; }));
  EXPECT_EQ(api_.WatchedFrom(), (std::vector<std::string>{"10", "15"}));
  EXPECT_EQ(VersionOf("a"), "11");
  EXPECT_EQ(Seen(), (std::vector<std::string>{"MODIFIED a"}));

  // 410 Gone: listed again; what changed meanwhile reaches the watchers.
  api_.List({PodAt("a", 11), PodAt("c", 16)}, 20);
  api_.Script({{{"type", "ERROR"}, {"object", {{"kind", "Status"}, {"code", 410}}}}});
  ASSERT_TRUE(Eventually([&] { return api_.WatchedFrom().size() == 3; }));
  EXPECT_EQ(api_.WatchedFrom().back(), "20");
  EXPECT_EQ(Seen(), (std::vector<std::string>{"MODIFIED a", "DELETED b", "ADDED c"}));
  EXPECT_EQ(VersionOf("b"), "missing");
  EXPECT_EQ(VersionOf("c"), "16");

  // An event older than what the cache holds changes nothing.
  api_.Script({{{"type", "MODIFIED"}, {"object", PodAt("a", 3)}}});
  ASSERT_TRUE(Eventually([&] { return api_.WatchedFrom().size() == 4; }));
  EXPECT_EQ(VersionOf("a"), "11");
  EXPECT_EQ(Seen().size(), 3u);
}

// As ObjectStore promises: a watch resumed from a resourceVersion the
// store gave is told the changes after it that it missed; one older than
// what is kept (or than the lists at Start) is OUT_OF_RANGE, to list again.
TEST_F(KubeStoreTest, AWatchResumesFromAnyResourceVersionStillKept) {
  KubeStore store(KubeStoreOptions{.client = client_.get(), .kinds = {"Pod"}, .watch_history = 1});
  ASSERT_TRUE(store.Start().ok());
  int64_t started = store.CurrentResourceVersion();
  EXPECT_EQ(store.Watch(started - 1, [](const store::WatchEvent&) {}).status().code(),
            StatusCode::kOutOfRange);
  api_.Script({{{"type", "MODIFIED"}, {"object", PodAt("a", 11)}},
               {{"type", "MODIFIED"}, {"object", PodAt("b", 12)}}});
  ASSERT_TRUE(Eventually([&] { return store.CurrentResourceVersion() == started + 2; }));

  // One change kept: resuming after the first is told the second alone.
  std::vector<std::string> told;
  auto tell = [&](const store::WatchEvent& e) {
    told.push_back(api::StringAt(e.object, {"metadata", "name"}) + "@" +
                   std::to_string(e.resource_version));
  };
  Result<store::WatchId> resumed = store.Watch(started + 1, tell);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(told, (std::vector<std::string>{"b@" + std::to_string(started + 2)}));
  store.StopWatch(*resumed);
  Result<store::WatchId> lost = store.Watch(started, tell);
  EXPECT_EQ(lost.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(lost.status().message(), HasSubstr("list again"));
  store.Stop();
}

// A kind whose CRD the cluster lacks is named, with what installs it.
TEST_F(KubeStoreTest, AKindTheClusterDoesNotServeIsNamedAtStart) {
  KubeStore store(KubeStoreOptions{.client = client_.get(), .kinds = {"Pod", "Experiment"}});
  Status started = store.Start();
  EXPECT_EQ(started.code(), StatusCode::kNotFound);
  EXPECT_THAT(started.message(), HasSubstr("the cluster serves no experiments.kubeflow.org"));
  EXPECT_THAT(started.message(), HasSubstr("trainyard manifests crds"));
  store.Stop();
  // JobSet's and the gang schedulers' are their projects' to install.
  KubeStore jobsets(KubeStoreOptions{.client = client_.get(), .kinds = {"JobSet"}});
  Status without = jobsets.Start();
  EXPECT_THAT(without.message(), HasSubstr("install JobSet"));
  EXPECT_THAT(without.message(), ::testing::Not(HasSubstr("trainyard manifests crds")));
  jobsets.Stop();
}

// The watch's DELETED comes before the delete's answer, as it often does
// on a real kube-apiserver: the answer, older than what the watch has
// delivered, never brings the pod back (as client-go's informer keeps it).
TEST_F(KubeStoreTest, ADeletesAnswerNeverBringsBackWhatTheWatchDeleted) {
  Collect();
  ASSERT_TRUE(store_->Start().ok());
  api::Json deleted = PodAt("b", 12);
  api_.Script({{{"type", "DELETED"}, {"object", deleted}}});
  ASSERT_TRUE(Eventually([&] { return VersionOf("b") == "missing"; }));
  ASSERT_TRUE(store_->Delete({"Pod", "ns", "b"}).ok());
  EXPECT_EQ(VersionOf("b"), "missing");
  int listed = 0;
  ASSERT_TRUE(store_->Scan("Pod", "ns", [&](const api::Json&) { ++listed; }).ok());
  EXPECT_EQ(listed, 1);  // a alone
  EXPECT_EQ(Seen(), (std::vector<std::string>{"DELETED b"}));
}

// The answer first: a pod deleted at once (grace 0, no finalizers) is gone
// from the cache then, not kept as if it waited.
TEST_F(KubeStoreTest, APodDeletedAtOnceLeavesTheCacheWithItsAnswer) {
  ASSERT_TRUE(store_->Start().ok());
  ASSERT_TRUE(store_->Delete({"Pod", "ns", "b"}).ok());
  EXPECT_EQ(VersionOf("b"), "missing");
}

TEST_F(KubeStoreTest, WritesAreReadBackAtOnceAndConflictsAreAborted) {
  ASSERT_TRUE(store_->Start().ok());
  api::Json pod = PodAt("d", 0);
  pod["metadata"].erase("resourceVersion");
  ASSERT_TRUE(store_->Create(pod).ok());
  EXPECT_EQ(VersionOf("d"), "100");  // before any watch event says so
  Result<api::Json> stale = store_->Update(PodAt("a", 1));
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_NE(stale.status().message().find("has been modified"), std::string::npos);
  // The conflict read the object again: the retry starts from the server's.
  EXPECT_EQ(VersionOf("a"), "42");
  // A kind it does not follow is read from the server.
  EXPECT_EQ(store_->Get({"Secret", "ns", "s"}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace trainyard::kube
