#!/usr/bin/env bash
# Builds Rail's image as an OCI archive from the repository's bin/ (make build) without a Docker engine
# or a base image, with the layout of the Dockerfile's final stage:
#   /usr/local/bin/raild, /opt/rail/bin/{rail,rail-ipam}, USER 0:0, ENTRYPOINT raild, CMD serve --config …
# image_test.go checks that this and the Dockerfile describe the same image.
#   build-image.sh OUT.tar IMAGE      (RAIL_BIN: where the binaries are, default <repo>/bin)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:?usage: build-image.sh OUT.tar IMAGE}
IMAGE=${2:?usage: build-image.sh OUT.tar IMAGE}
BIN=${RAIL_BIN:-$REPO/bin}
for b in raild rail rail-ipam; do
  [ -x "$BIN/$b" ] || { echo "$BIN/$b missing: run make build" >&2; exit 1; }
done
TOOLS=$(mktemp -d); trap 'rm -rf "$TOOLS"' EXIT
(cd "$REPO/integration/cri/tools" && CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} go build -o "$TOOLS/ociimage" ./cmd/ociimage)
"$TOOLS/ociimage" -name "$IMAGE" -o "$OUT.tmp" -require-static \
  -file "$BIN/raild:/usr/local/bin/raild" \
  -file "$BIN/rail:/opt/rail/bin/rail" \
  -file "$BIN/rail-ipam:/opt/rail/bin/rail-ipam" \
  -user 0:0 \
  -entrypoint /usr/local/bin/raild \
  -cmd serve -cmd --config -cmd /etc/rail/config.yaml
mv "$OUT.tmp" "$OUT"
echo "$OUT: $IMAGE"
