// The webhooks' answers (pure: AdmissionReview in, AdmissionReview out) and
// the self-managed certificate they are served with.
#include "kube/admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <ctime>

#include "common/strings.h"
#include "kube/certs.h"

namespace trainyard::kube {
namespace {

using ::testing::HasSubstr;

api::Json Review(const std::string& operation, api::Json object, api::Json old = nullptr) {
  api::Json request = {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                       {"operation", operation},
                       {"object", std::move(object)}};
  if (!old.is_null()) request["oldObject"] = std::move(old);
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

api::Json Job(int masters, const std::string& managed_by = "") {
  api::Json job = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata", {{"name", "mnist"}, {"namespace", "team"}}},
      {"spec",
       {{"pytorchReplicaSpecs",
         {{"Master",
           {{"template",
             {{"spec", {{"containers", {{{"name", "pytorch"}, {"image", "pytorch:2"}}}}}}}}}}}}}}};
  if (masters > 0) job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = masters;
  if (!managed_by.empty()) job["spec"]["runPolicy"]["managedBy"] = managed_by;
  return job;
}

TEST(AdmissionTest, ABadJobIsRefusedWithEveryFieldPath) {
  api::Json job = Job(2);
  job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["image"] = "";
  api::Json answer = AnswerAdmission(Review("CREATE", job), /*mutate=*/false);
  const api::Json& response = answer["response"];
  EXPECT_EQ(answer["kind"], "AdmissionReview");
  EXPECT_EQ(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_FALSE(response["allowed"].get<bool>());
  EXPECT_EQ(response["status"]["code"], 403);
  std::string message = response["status"]["message"];
  EXPECT_NE(message.find("spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image"),
            std::string::npos)
      << message;
  EXPECT_TRUE(message.starts_with("["));  // several errors, aggregated as Go does
}

TEST(AdmissionTest, DefaultsArePatchedInAndAGoodJobIsAllowed) {
  api::Json job = Job(0);  // replicas unset: upstream's webhook would refuse it
  api::Json mutated = AnswerAdmission(Review("CREATE", job), /*mutate=*/true)["response"];
  ASSERT_TRUE(mutated["allowed"].get<bool>());
  ASSERT_EQ(mutated["patchType"], "JSONPatch");
  api::Json patch = api::Json::parse(*Base64Decode(mutated["patch"].get<std::string>()));
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0]["op"], "replace");
  EXPECT_EQ(patch[0]["path"], "/spec");
  const api::Json& spec = patch[0]["value"];
  EXPECT_EQ(spec["pytorchReplicaSpecs"]["Master"]["replicas"], 1);
  EXPECT_EQ(spec["runPolicy"]["cleanPodPolicy"], "None");
  EXPECT_EQ(spec["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["ports"][0]
                ["containerPort"],
            23456);
  job["spec"] = spec;
  EXPECT_TRUE(AnswerAdmission(Review("CREATE", job), false)["response"]["allowed"].get<bool>());
  // Defaulted already: no patch.
  EXPECT_FALSE(AnswerAdmission(Review("CREATE", job), true)["response"].contains("patch"));
}

TEST(AdmissionTest, AnUpdateMayNotChangeWhoManagesTheJob) {
  api::Json before = Job(1, "kubeflow.org/training-operator");
  api::Json after = Job(1, "kueue.x-k8s.io/multikueue");
  api::Json answer = AnswerAdmission(Review("UPDATE", after, before), false)["response"];
  EXPECT_FALSE(answer["allowed"].get<bool>());
  EXPECT_NE(answer["status"]["message"].get<std::string>().find("spec.runPolicy.managedBy"),
            std::string::npos);
}

// Katib's Experiments are judged as `trainyard validate` judges them.
TEST(AdmissionTest, AnExperimentIsDefaultedAndValidatedToo) {
  api::Json experiment = api::Json::parse(R"({
    "apiVersion": "kubeflow.org/v1beta1", "kind": "Experiment",
    "metadata": {"name": "tune", "namespace": "kubeflow"},
    "spec": {
      "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
      "algorithm": {"algorithmName": "random"},
      "parameters": [{"name": "lr", "parameterType": "double",
                      "feasibleSpace": {"min": "0.1", "max": "0.01"}}],
      "trialTemplate": {"primaryContainerName": "main",
        "trialParameters": [{"name": "learningRate", "reference": "lr"}],
        "trialSpec": {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {
          "restartPolicy": "Never", "containers": [{"name": "main", "image": "x",
            "command": ["run", "--lr=${trialParameters.learningRate}"]}]}}}}}}})");
  api::Json denied = AnswerAdmission(Review("CREATE", experiment), false)["response"];
  EXPECT_FALSE(denied["allowed"].get<bool>());
  EXPECT_THAT(denied["status"]["message"].get<std::string>(),
              HasSubstr("spec.parameters: Invalid value: parameter \"lr\": min (0.1) must not be "
                        "greater than max (0.01)"));
  experiment["spec"]["parameters"][0]["feasibleSpace"] = {{"min", "0.01"}, {"max", "0.1"}};
  api::Json mutated = AnswerAdmission(Review("CREATE", experiment), true)["response"];
  ASSERT_TRUE(mutated["allowed"].get<bool>());
  EXPECT_EQ(mutated["patchType"], "JSONPatch");  // Katib's defaults, such as parallelTrialCount
  EXPECT_EQ(WebhookPath("Experiment", false), "/validate-kubeflow-org-v1beta1-experiment");
}

TEST(AdmissionTest, WhatIsNotAJobIsNotOursToJudge) {
  api::Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "x"}}}};
  EXPECT_TRUE(AnswerAdmission(Review("CREATE", pod), false)["response"]["allowed"].get<bool>());
  api::Json deletion = Review("DELETE", nullptr);
  EXPECT_TRUE(AnswerAdmission(deletion, false)["response"]["allowed"].get<bool>());
  EXPECT_EQ(WebhookPath("PyTorchJob", false), "/validate-kubeflow-org-v1-pytorchjob");
  EXPECT_EQ(WebhookPath("TFJob", true), "/mutate-kubeflow-org-v1-tfjob");
}

TEST(CertsTest, TheServingCertificateIsSignedByItsCaForTheServiceNames) {
  Result<ServingCertificate> made = MakeServingCertificate(
      {"trainyard-operator.kubeflow.svc", "trainyard-operator.kubeflow.svc.cluster.local"});
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto read = [](const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return cert;
  };
  X509* ca = read(made->ca_pem);
  X509* cert = read(made->cert_pem);
  ASSERT_NE(ca, nullptr);
  ASSERT_NE(cert, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  EXPECT_EQ(X509_verify_cert(ctx), 1)
      << X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  EXPECT_EQ(X509_check_host(cert, "trainyard-operator.kubeflow.svc", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "evil.example", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ca(cert), 0);  // the leaf signs nothing
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(ca);
  X509_free(cert);
}

// A held certificate is renewed when it would not serve: broken, not its
// CA's, for other names, or close to expiring.
TEST(CertsTest, AHeldCertificateIsRenewedWhenItWouldNotServe) {
  const std::vector<std::string> names = {"trainyard-operator.kubeflow.svc"};
  Result<ServingCertificate> made = MakeServingCertificate(names);
  Result<ServingCertificate> other = MakeServingCertificate(names);
  ASSERT_TRUE(made.ok() && other.ok());
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const int64_t ninety_days = 90LL * 24 * 3600;
  EXPECT_EQ(CertificateProblem(*made, names, now, ninety_days), std::nullopt);
  // Ten years on, less than ninety days are left.
  const int64_t later = now + 10LL * 365 * 24 * 3600 - 30LL * 24 * 3600;
  EXPECT_THAT(CertificateProblem(*made, names, later, ninety_days).value_or(""),
              HasSubstr("expires within 90 days"));
  EXPECT_THAT(
      CertificateProblem(*made, {"trainyard-operator.other.svc"}, now, ninety_days).value_or(""),
      HasSubstr("does not name trainyard-operator.other.svc"));
  ServingCertificate foreign = *made;
  foreign.ca_pem = other->ca_pem;
  EXPECT_EQ(CertificateProblem(foreign, names, now, ninety_days), "its CA did not sign it");
  ServingCertificate mismatched = *made;
  mismatched.key_pem = other->key_pem;
  EXPECT_EQ(CertificateProblem(mismatched, names, now, ninety_days),
            "its key is not the certificate's");
  ServingCertificate broken = *made;
  broken.cert_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(CertificateProblem(broken, names, now, ninety_days), "it does not parse as PEM");
}

}  // namespace
}  // namespace trainyard::kube
