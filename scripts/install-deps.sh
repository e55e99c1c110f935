#!/usr/bin/env bash
# Installs the Debian 12 packages trainyard builds and tests with, when any is
# missing. Runs as root, or through sudo.
set -euo pipefail

packages=(
  build-essential make cmake ninja-build ccache pkg-config git
  libfmt-dev libyaml-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # Tuning: Eigen for the Gaussian process and CMA-ES, RE2 for metric
  # filters (Go's regex syntax, which Katib's metricsFormat is written in).
  libeigen3-dev libre2-dev
  # Boost.Random's Sobol sequence (header-only), for the sobol algorithm.
  libboost-dev
  clang libclang-rt-14-dev clang-format
  # Replicas' sandboxes: volumes at their mountPath, the pod's host name
  # (node/sandbox.h); unshare (util-linux, essential) holds their user
  # namespace when trainyard is not root.
  bubblewrap
  # What the examples and their end-to-end tests train with.
  python3 python3-torch python3-sklearn python3-xgboost openmpi-bin python3-mpi4py
  # The anchor the tuning benchmark compares against.
  python3-optuna
  # The Kubernetes client users drive the server with, in its end-to-end
  # test, and openssl for that test's certificate.
  python3-kubernetes openssl
  # ssh-keygen, which checks the SSH key an MPI TrainJob's Secret holds.
  openssh-client
  # The operator's container image: umoci makes it (an OCI layout, no
  # daemon), skopeo reads it in the test and pushes it to a registry.
  umoci skopeo
  # Images (src/image): skopeo pulls them, libarchive unpacks their layers.
  # Their tests push images built from busybox-static to Debian's
  # docker-registry on loopback, behind htpasswd (apache2-utils) auth.
  libarchive-dev docker-registry busybox-static apache2-utils
  # promtool, which checks the server's /metrics. (Debian ships it only
  # with the Prometheus server, which systemd then starts on :9090.)
  prometheus
  # The dashboard's browser tests: Debian's headless Chromium, driven by
  # Selenium through ChromeDriver (no test tool downloads a browser).
  chromium chromium-driver python3-selenium
)

# Node.js and npm install the dashboard's libraries (scripts/web-deps.sh):
# Debian's, unless they are there.
command -v npm >/dev/null || packages+=(nodejs npm)

# kubectl, for the server's end-to-end tests: Debian's, unless one is there.
command -v kubectl >/dev/null || packages+=(kubernetes-client)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Where systemd runs, installing docker-registry starts it on every
# address's port 5000: the tests start their own on loopback, so it goes.
if [[ " ${missing[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null &&
  systemctl is-active --quiet docker-registry 2>/dev/null; then
  $sudo systemctl disable --now docker-registry
fi
