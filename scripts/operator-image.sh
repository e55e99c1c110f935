#!/usr/bin/env bash
# Makes the operator's container image, an OCI image archive, from a built
# trainyard: the binary and the shared libraries it links (nothing else: no
# shell, no package manager), run as a user of no privilege, running
# `trainyard operator`: its entrypoint is trainyard, its command operator
# (the operator's Deployment gives `operator` and its flags as args).
#
#   usage: operator-image.sh TRAINYARD_BINARY OUT_DIR
#   makes: OUT_DIR/trainyard-operator.tar (oci-archive, tagged with the
#          binary's version), which `skopeo copy oci-archive:...` pushes and
#          `podman load -i` loads.
#
# umoci builds it: it writes an OCI image layout directly, needs no daemon,
# storage or user namespace, and runs as any user (as CI does); skopeo is
# only needed to push the archive (docs/kubernetes.md).
set -euo pipefail

binary=$(readlink -f "$1")
out=$2
command -v umoci >/dev/null || { echo "operator-image: umoci is needed (apt-get install umoci)" >&2; exit 1; }
version=$("$binary" --version)
mkdir -p "$out"
work=$(mktemp -d "$out/operator-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs

# The binary, and every shared library the loader maps for it (ldd's
# "=> /path" entries, and the loader itself), at the paths it looks at.
install -D -m 0755 "$binary" "$root/usr/local/bin/trainyard"
# Debug information is no use in a container, and most of a debug build.
strip --strip-debug "$root/usr/local/bin/trainyard"
ldd "$binary" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' | while read -r lib; do
  install -D -m 0644 "$(readlink -f "$lib")" "$root$lib"
done
chmod 0755 "$root"/lib64/ld-linux-*.so.* 2>/dev/null || true
# The user it runs as: no privilege, and a name for programs that ask.
# Where a runtime mounts /proc, /dev and /sys on a read-only root.
mkdir -p "$root/etc" "$root/tmp" "$root/proc" "$root/dev" "$root/sys"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\ntrainyard:x:65532:65532:trainyard:/tmp:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\ntrainyard:x:65532:\n' >"$root/etc/group"

layout=$work/layout
tag=$version
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
# The files go in by unpack and repack, not `umoci insert`: Debian 12's
# umoci (0.4.7) ends an inserted layer without the tar's padding and end
# blocks (umoci#436), which GNU tar and Python's tarfile refuse. Files are
# root's in the image whoever builds it (--rootless maps the builder to 0).
rootless=()
[ "$(id -u)" -eq 0 ] || rootless=(--rootless)
bundle=$work/bundle
umoci unpack "${rootless[@]}" --image "$layout:$tag" "$bundle"
cp -a "$root/." "$bundle/rootfs/"
umoci repack --history.created_by "trainyard $version" --image "$layout:$tag" "$bundle"
umoci config --image "$layout:$tag" --config.user 65532:65532 \
  --config.entrypoint /usr/local/bin/trainyard --config.cmd operator \
  --config.workingdir /tmp --os linux --architecture amd64 \
  --config.label "org.opencontainers.image.title=trainyard operator" \
  --config.label "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"
# An oci-archive is the layout, as a tar.
tar -C "$layout" -cf "$out/trainyard-operator.tar" .
echo "operator-image: $out/trainyard-operator.tar (trainyard:$version)"
