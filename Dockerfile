# Images of sriov-dra-operator, built from this tree on Debian bookworm (scripts/build-images.sh).
#   docker build --target operator -t sriov-dra-operator .
#   docker build --target agent -t sriov-dra-agent .
#   docker build --target cli -t sriov-dra .

FROM debian:bookworm-slim AS builder
RUN apt-get update && apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config ca-certificates \
      libboost1.81-dev libboost-url1.81-dev libssl-dev rapidjson-dev libyaml-cpp-dev \
      prometheus-cpp-dev libcli11-dev libgrpc++-dev libprotobuf-dev protobuf-compiler \
      protobuf-compiler-grpc catch2 libbenchmark-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && cmake --build /build --target sriov-dra-operator sriov-dra-agent sriov-dra \
    && strip /build/bin/sriov-dra-operator /build/bin/sriov-dra-agent /build/bin/sriov-dra

# The shared libraries every binary needs at run time (Debian's packages, as built against).
FROM debian:bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates libssl3 libboost-url1.81.0 libyaml-cpp0.7 libprometheus-cpp-core1.0 \
      libgrpc++1.51 libprotobuf32 \
    && rm -rf /var/lib/apt/lists/*

FROM runtime AS operator
COPY --from=builder /build/bin/sriov-dra-operator /usr/bin/sriov-dra-operator
USER 65532:65532
ENTRYPOINT ["/usr/bin/sriov-dra-operator"]

# The agent runs privileged (it writes sysfs); it needs no tools beyond its binary.
FROM runtime AS agent
COPY --from=builder /build/bin/sriov-dra-agent /usr/bin/sriov-dra-agent
ENTRYPOINT ["/usr/bin/sriov-dra-agent"]

FROM runtime AS cli
COPY --from=builder /build/bin/sriov-dra /usr/bin/sriov-dra
USER 65532:65532
ENTRYPOINT ["/usr/bin/sriov-dra"]
