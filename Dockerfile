# lethe in a container: the static binary on Debian slim with the
# PostgreSQL 15 server binaries, so the embedded database works when no
# DATABASE_URL is given. deploy/compose.yaml runs it against a separate
# PostgreSQL.
#
#   docker build -t lethe --build-arg VERSION=v0.1.0 .
#   docker run -p 6632:6632 -v lethe-data:/var/lib/lethe lethe
#
# The build stage runs deploy/build.sh, the same script CI runs without
# Docker.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
COPY client/go.mod client/go.sum client/
RUN GOWORK=off go mod download
COPY . .
ARG VERSION=
RUN VERSION="${VERSION}" deploy/build.sh /out/lethe

FROM debian:bookworm-slim
# The server binaries only: no cluster is created at install time (lethe
# creates its own in LETHE_DATA_DIR when it needs one).
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/lethe.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/lethe --create-home --shell /usr/sbin/nologin lethe
COPY --from=build /out/lethe /usr/local/bin/lethe
# HOST=0.0.0.0 serves the container's port only with credentials
# (LETHE_AUTH_TOKEN, LETHE_OPERATOR_TOKEN, JWT_ENABLED) or LETHE_AUTH=none;
# without either lethe stops at start and says what to set.
ENV LETHE_DATA_DIR=/var/lib/lethe \
    HOST=0.0.0.0 \
    PORT=6632
# The embedded cluster and the maintenance-mode push buffer.
VOLUME /var/lib/lethe
USER lethe
WORKDIR /var/lib/lethe
EXPOSE 6632
# /health needs no token; bash's /dev/tcp spares installing curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT} && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["lethe"]
CMD ["serve"]
