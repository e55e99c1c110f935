#!/usr/bin/env bash
# The operator's image (scripts/operator-image.sh) is a valid OCI image:
# skopeo reads the archive, its layers are whole tars, umoci unpacks it,
# its entrypoint is trainyard
# with `operator` as its command, it runs as 65532, and what it holds runs
# on its own files alone (under bwrap, with nothing of this machine's):
# `trainyard --version` answers.
#   usage: operator_image_check.sh TRAINYARD_BINARY
# Exit 77 (skipped) without umoci, skopeo or bwrap.
set -euo pipefail
for tool in umoci skopeo bwrap; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done
binary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$(dirname "$0")/../scripts/operator-image.sh" "$binary" "$work/out"
version=$("$binary" --version)
archive="oci-archive:$work/out/trainyard-operator.tar:$version"
config=$(skopeo inspect --config "$archive")
python3 - "$config" <<'PY'
import json, sys
c = json.loads(sys.argv[1])["config"]
assert c["Entrypoint"] == ["/usr/local/bin/trainyard"], c
assert c["Cmd"] == ["operator"], c
assert c["User"] == "65532:65532", c
PY
mkdir "$work/layout"
tar -C "$work/layout" -xf "$work/out/trainyard-operator.tar"
# Every layer a whole tar to strict readers too (GNU tar, scanners): what
# Debian 12's `umoci insert` did not write (umoci#436).
for blob in "$work/layout"/blobs/sha256/*; do
  if gzip -t "$blob" 2>/dev/null; then
    tar -tzf "$blob" >/dev/null || { echo "layer $blob is no whole tar"; exit 1; }
  fi
done
umoci unpack --rootless --image "$work/layout:$version" "$work/bundle" >/dev/null
rootfs=$work/bundle/rootfs
[ ! -e "$rootfs/bin/sh" ] || { echo "the image holds a shell"; exit 1; }
got=$(bwrap --ro-bind "$rootfs" / --proc /proc --dev /dev --unshare-all \
  --uid 65532 --gid 65532 /usr/local/bin/trainyard --version)
[ "$got" = "$version" ] || { echo "trainyard --version in the image said '$got', not '$version'"; exit 1; }
echo "ok: trainyard:$version runs from its image"
