set -e
gcc -g -Os -o x64-debug small.c
objcopy --only-keep-debug x64-debug x64.debug
objcopy --strip-debug --add-gnu-debuglink=x64.debug x64-debug x64-stripped-debuglink
objcopy --compress-debug-sections=zlib x64-debug x64-zlib
objcopy --compress-debug-sections=zlib-gnu x64-debug x64-zlib-gnu
gcc -m32 -g -Os -o i386-debug small.c
objcopy --compress-debug-sections=zlib i386-debug i386-zlib
gcc -shared -fPIC -nostdlib -Os -Wl,--build-id -o x64-lib.so lib.c
clang --target=powerpc64-linux-gnu -fuse-ld=lld -nostdlib -shared -Os -Wl,--build-id -o ppc64-be.so lib.c
clang --target=powerpc-linux-gnu -fuse-ld=lld -nostdlib -shared -Os -g -Wl,--build-id=sha1 -Wl,--compress-debug-sections=zlib -o ppc32-be-zlib.so lib.c
clang --target=mips-linux-gnu -g -c -o mips32-be-relocatable small.c
gcc -shared -fPIC -nostdlib -Os -Wl,--hash-style=sysv -o x64-lib-sysv-hash.so lib.c
