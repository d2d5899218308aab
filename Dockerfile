# syntax=docker/dockerfile:1
# Two-stage build on the same Debian release (bookworm) for builder and runtime.

FROM swift:6.1-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-dev libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
RUN swift build -c release --static-swift-stdlib --product presignd \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/presignd" /out/presignd

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-2.1-7 libevent-openssl-2.1-7 libevent-pthreads-2.1-7 \
      libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin presignd
COPY --from=build /out/presignd /usr/local/bin/presignd
COPY config/presignd.example.toml /etc/presignd/presignd.toml
USER 10001:10001
EXPOSE 8080 9180
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/presignd", "healthcheck", "--admin", "127.0.0.1:9180"]
ENTRYPOINT ["/usr/local/bin/presignd"]
CMD ["run", "--config", "/etc/presignd/presignd.toml"]
