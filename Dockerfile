# The example binaries in a small runtime image:
#   docker build -t satin-examples:latest .
# Build stage: the whole workspace, release profile.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p satin-examples --bins \
    && mkdir /out \
    && find target/release -maxdepth 1 -type f -executable -exec cp {} /out/ \;

# Runtime stage: the binaries and nothing else (they link only glibc).
FROM debian:bookworm-slim
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
# No entrypoint: the pod (or `docker run IMAGE nqueens 14`) names the binary.
CMD ["nqueens", "--help"]
