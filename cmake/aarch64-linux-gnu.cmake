# Cross build for 64-bit Arm with Debian's cross toolchain and multiarch
# libraries (scripts/install-deps installs both):
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# The BPF target follows CMAKE_SYSTEM_PROCESSOR (arm64), and vmlinux.h is the
# vendored arm64 one (the build host's BTF describes another CPU).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(LES_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${LES_CROSS_TRIPLET}-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE ${LES_CROSS_TRIPLET})

# Libraries and headers from the target's multiarch directories only; the
# build tools (clang for the BPF object, bpftool, xz) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${LES_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${LES_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
