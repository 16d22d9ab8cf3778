# webhookd image: built on Debian bookworm; the final image holds only the two
# binaries, the shared libraries they load, CA certificates and a passwd entry
# for the non-root user 65532 (no shell, no package manager, no docs), ~22 MB
# uncompressed.  scripts/image-rootfs.sh assembles that root filesystem, here
# from the packages apt installs in the rootfs stage, in scripts/image.sh from
# the same packages unpacked by mmdebstrap, so both give the same contents
# (scripts/image.sh builds the OCI archive without docker; tests/image runs it).
# Nothing is written to the root filesystem (readOnlyRootFilesystem works).
#
#   docker build -t webhookd .
#   docker run --rm --read-only -p 8443:8443 webhookd --tls-san=localhost
#   # serving certificate files from a volume (hot-reloaded when they change):
#   docker run --rm --read-only -v $PWD/tls:/etc/webhookd/tls:ro -p 8443:8443 webhookd \
#       --tls-cert-file=/etc/webhookd/tls/tls.crt --tls-key-file=/etc/webhookd/tls/tls.key
#
# Without certificate files webhookd serves a self-signed ECDSA P-256
# certificate generated in memory at start.  To get that certificate out
# (--self-signed-cert-out), give it a writable directory: a tmpfs
# (--tmpfs /run/webhookd) or an emptyDir volume.

FROM debian:bookworm AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends build-essential cmake pkg-config libh2o-evloop-dev \
      libssl-dev libjansson-dev libyaml-dev libcurl4-openssl-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DWH_BUILD_TESTS=OFF \
 && cmake --build /build -j"$(nproc)" --target webhookd webhookctl \
 && /build/server/webhookd --version \
 && scripts/image-rootfs.sh / /rootfs /build/server/webhookd /build/ctl/webhookctl

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/webhookd"]
CMD ["--listen=:8443"]
