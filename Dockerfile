# syntax=docker/dockerfile:1
# presignd image (README: "Docker sidecar"). Two stages on the same Debian release (12, bookworm).
#   docker build -t presignd .
# The runtime stage is checked without a Docker engine by scripts/debootstrap-check.sh, which builds the binary the
# same way and runs it in a Debian 12 root holding exactly RUNTIME_PACKAGES.

# Builder: the Swift toolchain image for bookworm, plus the C libraries' headers.
ARG SWIFT_IMAGE=swift:6.3-bookworm
FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-dev libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The Swift runtime is linked in (--static-swift-stdlib); libevent and OpenSSL stay shared (Debian's security updates).
RUN swift build -c release --static-swift-stdlib --product presignd \
 && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/presignd" /out/presignd \
 && ldd /out/presignd

# Runtime: what `ldd` lists (libevent 2.1 core/extra/pthreads, OpenSSL 3, libstdc++; libc, libm and
# libgcc_s are in the base image), CA certificates for TLS to the upstreams, and the binary.
FROM debian:bookworm-slim
ARG RUNTIME_PACKAGES="libevent-2.1-7 libevent-core-2.1-7 libevent-extra-2.1-7 libevent-pthreads-2.1-7 libssl3 libstdc++6 ca-certificates"
RUN apt-get update \
 && apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin presignd
COPY --from=build /out/presignd /usr/local/bin/presignd
# Configuration: mount a file here (read-only), or point PRESIGND_CONFIG elsewhere. The secret key comes from a
# Docker secret file (secret_access_key_file = "/run/secrets/…") or from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
ENV PRESIGND_CONFIG=/etc/presignd/presignd.toml
USER 10001:10001
# 8080: the proxy listener, 9180: the admin listener (health, readiness, metrics), as in config/*.toml.
EXPOSE 8080 9180
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/presignd", "healthcheck", "--admin", "127.0.0.1:9180"]
ENTRYPOINT ["/usr/local/bin/presignd"]
CMD ["run"]
