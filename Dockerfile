# dlqd on Debian 12. The image listens on 0.0.0.0:8080 and therefore refuses to start until you
# mount a configuration at /etc/dlq/dlqd.json that sets access tokens (or, knowingly,
# auth.allow_anonymous): secure by default. Data lives in the /var/lib/dlq volume.
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDLQ_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target dlqd

FROM debian:bookworm
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN DLQ_RUNTIME_ONLY=1 /tmp/install-deps.sh && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh \
 && useradd --system --home /var/lib/dlq dlq && mkdir -p /var/lib/dlq /etc/dlq && chown dlq /var/lib/dlq
COPY --from=build /src/build/app/dlqd /usr/local/bin/dlqd
COPY config/docker.json /etc/dlq/dlqd.json
USER dlq
VOLUME /var/lib/dlq
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/dlqd", "--config", "/etc/dlq/dlqd.json"]
