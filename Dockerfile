# dlqd on Debian 12. The image listens on 0.0.0.0:8080, and its built-in configuration holds a
# token placeholder, so it refuses to start until you mount a configuration at
# /etc/dlq/dlqd.json with a real token hash (README, "Docker"): secure by default.
# Data lives in the /var/lib/dlq volume. dlqctl is in the image for the health check and for
# `docker exec` sessions.
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDLQ_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target dlqd dlqctl

FROM debian:bookworm
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN DLQ_RUNTIME_ONLY=1 /tmp/install-deps.sh && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh \
 && useradd --system --home /var/lib/dlq dlq && mkdir -p /var/lib/dlq /etc/dlq && chown dlq /var/lib/dlq
COPY --from=build /src/build/app/dlqd /usr/local/bin/dlqd
COPY --from=build /src/build/app/dlqctl /usr/local/bin/dlqctl
COPY config/docker.json /etc/dlq/dlqd.json
USER dlq
VOLUME /var/lib/dlq
EXPOSE 8080
# dlqctl talks to the dlqd in this container; /healthz needs no token. No curl in the image:
# dlqctl exits 0 on 200 and non-zero when dlqd does not answer (tests/dlqctl/packaging_test.cpp
# runs this exact command against a live dlqd).
ENV DLQ_URL=http://127.0.0.1:8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/dlqctl", "--timeout", "4", "health"]
ENTRYPOINT ["/usr/local/bin/dlqd", "--config", "/etc/dlq/dlqd.json"]
