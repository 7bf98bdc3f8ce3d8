# syntax=docker/dockerfile:1

# Build a static binary; the module download is its own layer so code changes reuse it.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/gateway .

# Distroless static: no shell, no package manager, runs as the unprivileged "nonroot" user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
USER nonroot:nonroot
# Outside a container the gateway listens on loopback unless told otherwise; inside one, a
# published port reaches it only on the container's own interface.
ENV ADDR=:8080
EXPOSE 8080
ENTRYPOINT ["/gateway"]
