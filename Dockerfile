# webhookd image: built on Debian bookworm, run on bookworm-slim with only the
# runtime libraries, the two binaries, a numeric non-root user, and nothing
# written to the root filesystem (it works with readOnlyRootFilesystem).
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
 && install -D -m 0755 /build/server/webhookd /out/usr/local/bin/webhookd \
 && install -D -m 0755 /build/ctl/webhookctl /out/usr/local/bin/webhookctl \
 && strip /out/usr/local/bin/*

FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends libh2o-evloop0.13 libssl3 libjansson4 libyaml-0-2 libcurl4 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/*
COPY --from=build /out/ /
# Fail the build if a runtime library is missing.
RUN ! ldd /usr/local/bin/webhookd /usr/local/bin/webhookctl | grep -q "not found" \
 && /usr/local/bin/webhookd --version
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/webhookd"]
CMD ["--listen=:8443"]
