# Multi-stage: static binaries, minimal runtime image with raild, rail and rail-ipam.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/raild ./daemon && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/rail ./plugins/rail && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/rail-ipam ./plugins/rail-ipam

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/raild /usr/local/bin/raild
COPY --from=build /out/rail /out/rail-ipam /opt/rail/bin/
# raild needs root on the node (netlink, the NRI and kubelet sockets, /var/lib/rail).
USER 0:0
ENTRYPOINT ["/usr/local/bin/raild"]
CMD ["serve", "--config", "/etc/rail/config.yaml"]
