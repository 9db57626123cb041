#!/bin/sh
# Copies what running the tests needs out of a build folder, small enough to carry to the GPU machine
# (the device tool carries 64 MiB at most): the CTest files, CMakeCache.txt and the executables with
# their debug info stripped (symbols kept); no object files, no build system.
#   tests/gpu/pack_build.sh [build-dir] [destination]      (defaults: build .carry/build)
# Then, on the GPU machine: tests/gpu/run_on_gpu.sh .carry/build
set -eu
src=${1:-build}
dest=${2:-.carry/build}
[ -f "$src/CMakeCache.txt" ] || { echo "pack_build.sh: $src is not a build folder"; exit 2; }
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$src" --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude='*.ninja' --exclude='.ninja_*' \
    --exclude=kernel-cache --exclude=gpu-logs --exclude=Testing -cf - . | tar -C "$dest" -xf -
find "$dest" -type f -perm -u+x | while read -r file; do
  if head -c 4 "$file" | grep -q 'ELF'; then objcopy --strip-debug "$file"; fi
done
echo "pack_build.sh: $(du -sh "$dest" | cut -f1) in $dest"
