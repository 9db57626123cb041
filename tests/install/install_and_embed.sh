#!/bin/sh
# Installs the build into a temporary prefix, builds a small program against the installed CMake package
# (find_package(IrisLua), IrisLua::host) and runs it; runs the installed iris-lua; makes the Debian
# package and lists it (issue 27). $1: cmake, $2: cpack, $3: the build folder, $4: this folder.
set -e
cmake=$1
cpack=$2
build=$3
here=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cmake" --install "$build" --prefix "$work/prefix" > "$work/install.log"
echo "installed: $(cd "$work/prefix" && find . -type f | sort | tr '\n' ' ')"
"$cmake" -S "$here/embed" -B "$work/embed" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/embed" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/embed/embed_iris"
"$work/prefix/bin/iris-lua" -e "print('installed iris-lua ' .. iris.version)"
# The Debian package, uncompressed (what it holds is what is checked here, not its size).
(cd "$work" && "$cpack" --config "$build/CPackConfig.cmake" -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE=none \
  -D CPACK_DEBIAN_PACKAGE_SHLIBDEPS=OFF > "$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/*.deb)
echo "package: $(basename "$deb")"
dpkg-deb --contents "$deb" | awk '{print $6}' | grep -E 'bin/iris-lua$|libirislua.a$|host.hpp$|IrisLuaConfig.cmake$' | sort
