#!/usr/bin/env bash
# usage (on the device): bash bench/cuda_ipc_probe.sh   (found on an H200, 2026-12-06: both work)
# Legacy CUDA IPC from a bwrap sandbox (as kernelpro's: --unshare-all, /dev/nvidia* bound) to a
# process outside it; then both outside (control).
set -u
here=$(cd "$(dirname "$0")" && pwd)
bwrap=$(command -v bwrap || echo /tmp/kp-bwrap/usr/bin/bwrap)
[ -x "$bwrap" ] || { mkdir -p /tmp/kp-bwrap && dpkg -x "$(ls "$here"/../.carry/bubblewrap_*.deb | head -1)" /tmp/kp-bwrap; bwrap=/tmp/kp-bwrap/usr/bin/bwrap; }
for mode in sandbox plain; do
  d=$(mktemp -d /tmp/ipc.XXXX)
  if [ $mode = sandbox ]; then
    devs=(); for f in /dev/nvidia*; do [ -e "$f" ] && devs+=(--dev-bind "$f" "$f"); done
    [ -d /dev/dri ] && devs+=(--dev-bind /dev/dri /dev/dri)
    "$bwrap" --die-with-parent --unshare-all --ro-bind / / --proc /proc --dev /dev "${devs[@]}" \
      --tmpfs /tmp --bind "$d" "$d" --ro-bind "$here" "$here" python3 "$here/cuda_ipc_probe.py" export "$d" &
  else
    python3 "$here/cuda_ipc_probe.py" export "$d" &
  fi
  pid=$!
  timeout 60 python3 "$here/cuda_ipc_probe.py" import "$d"; echo "[$mode] import rc=$?"
  wait $pid; echo "[$mode] export rc=$?"
done
