#!/usr/bin/env bash
# Builds stand-ins for the official images deploy/compose.yaml names besides the service's own, where no image
# registry is reachable: one Debian bookworm root filesystem (debootstrap, from Debian's mirror) with PostgreSQL 15,
# HAProxy 2.6, Redis 7 and Prometheus, tagged once per image with that image's entrypoint, command and user. Only what
# the compose file relies on is reproduced: the programs on PATH, the official configuration paths it mounts files
# at, and each image's default user. Cached by what it is made of, like stand-in-node-image.sh.
set -euo pipefail

MIRROR=${MIRROR:-http://deb.debian.org/debian}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docanchor-container-test}
PACKAGES=postgresql-15,haproxy,redis-server,prometheus,ca-certificates
mkdir -p "$CACHE"
key=$({ cat "$0"; echo "bookworm $MIRROR $PACKAGES"; } | sha256sum | cut -c1-16)

images=(
  docker.io/library/postgres:15-bookworm
  docker.io/library/haproxy:2.6
  docker.io/library/redis:7-bookworm
  docker.io/prom/prometheus:v2.42.0
)
up_to_date=true
for image in "${images[@]}"; do
  [ "$(podman image inspect --format '{{index .Labels "stand-in.key"}}' "$image" 2>/dev/null)" = "$key" ] ||
    up_to_date=false
done
if $up_to_date; then
  echo "the service stand-ins are there"
  exit 0
fi

rootfs_tar=$CACHE/services-$key.tar
if [ ! -f "$rootfs_tar" ]; then
  work=$(mktemp -d "$CACHE/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  root=$work/rootfs
  mkdir -p "$root"
  # The packages' root filesystem, cached by the packages alone (the longest step: minutes).
  packages_tar=$CACHE/debootstrap-bookworm-$(echo "$MIRROR $PACKAGES" | sha256sum | cut -c1-16).tar
  if [ ! -f "$packages_tar" ]; then
    echo "debootstrap --variant=minbase --include=$PACKAGES bookworm"
    debootstrap --variant=minbase --include="$PACKAGES" bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; exit 1; }
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
      "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/dev/*
    tar --numeric-owner -C "$root" -cf "$packages_tar.tmp" . && mv "$packages_tar.tmp" "$packages_tar"
  else
    tar --numeric-owner -C "$root" -xf "$packages_tar"
  fi
  # The paths the official images keep their configuration and data at (/bin/prometheus is /usr/bin's, /bin being
  # a link to /usr/bin on bookworm).
  mkdir -p "$root/usr/local/etc/haproxy" "$root/etc/prometheus" "$root/prometheus" "$root/data" \
    "$root/var/lib/postgresql/data" "$root/var/run/postgresql"
  chroot "$root" chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql
  chroot "$root" chown redis:redis /data
  chroot "$root" chown prometheus:prometheus /prometheus
  tar --numeric-owner -C "$root" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
fi

path=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
import() {
  local image=$1
  shift
  podman import -q --change "ENV PATH=$path" --change "LABEL stand-in.key=$key" "$@" \
    --message "stand-in for $image: Debian bookworm packages" "$rootfs_tar" "$image" >/dev/null
  echo "$image: the stand-in imported"
}
import docker.io/library/postgres:15-bookworm --change 'ENV PGDATA=/var/lib/postgresql/data' \
  --change 'CMD ["postgres"]' --change 'STOPSIGNAL SIGINT'
import docker.io/library/haproxy:2.6 --change 'USER haproxy' \
  --change 'CMD ["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]' --change 'STOPSIGNAL SIGUSR1'
import docker.io/library/redis:7-bookworm --change 'USER redis' --change 'WORKDIR /data' \
  --change 'CMD ["redis-server"]'
import docker.io/prom/prometheus:v2.42.0 --change 'USER prometheus' --change 'WORKDIR /prometheus' \
  --change 'ENTRYPOINT ["/bin/prometheus"]' \
  --change 'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]'
