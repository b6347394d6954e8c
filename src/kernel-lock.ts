/**
 * flock(2) through bun:ffi: an exclusive lock the kernel holds on an open file for as long as the file
 * stays open in the process, dropped when it is closed or the process ends in any way (a crash, kill -9),
 * whatever pid the process had and in whichever pid namespace (two containers on one host). Used by
 * src/instance-file.ts for the data directory's `instance.lock`.
 */
import { dlopen, FFIType, read, suffix } from "bun:ffi";

/** flock(2)'s operations (the same numbers on Linux and macOS). */
const LOCK_EX = 2;
const LOCK_NB = 4;

/** errno values: EINTR is 4 everywhere; EWOULDBLOCK (EAGAIN) is 11 on Linux, 35 on macOS and the BSDs. */
const EINTR = 4;
const EWOULDBLOCK = process.platform === "linux" ? 11 : 35;

/**
 * The errno values of a file system that has no locks (Linux: asm-generic/errno*.h, glibc and musl alike;
 * macOS: sys/errno.h): ENOLCK (NFS without its lock daemon), EOPNOTSUPP and ENOTSUP (one number on Linux,
 * two on macOS; some FUSE and SMB mounts), ENOSYS.
 */
export const NO_LOCKS_ERRNO =
  process.platform === "darwin" ? { ENOLCK: 77, EOPNOTSUPP: 102, ENOTSUP: 45, ENOSYS: 78 } : { ENOLCK: 37, EOPNOTSUPP: 95, ENOTSUP: 95, ENOSYS: 38 };

/** flock(2) failing otherwise than "held": its errno, and whether that says the file system has no locks. */
export class FlockError extends Error {
  /** @param errno the C library's errno after the failed call */
  constructor(readonly errno: number) {
    const name = Object.entries(NO_LOCKS_ERRNO).find(([, n]) => n === errno)?.[0];
    super(`flock failed (errno ${errno}${name ? ` ${name}` : ""})`);
  }

  /** ENOLCK, EOPNOTSUPP/ENOTSUP or ENOSYS ({@link NO_LOCKS_ERRNO}): the file system does not lock; the caller may claim otherwise. */
  get noLocks(): boolean {
    return Object.values(NO_LOCKS_ERRNO).includes(this.errno);
  }
}

/** The C library's file names to try: glibc's, then musl's (Alpine), on Linux; libSystem's on macOS. */
function libraries(): string[] {
  if (process.platform === "linux") return ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, `libc.${suffix}`];
  if (process.platform === "darwin") return [`libc.${suffix}`, "libSystem.B.dylib"];
  return [];
}

/** Non-blocking exclusive flock(2) on an open file descriptor (see {@link kernelLock}). */
export interface KernelLock {
  /**
   * Takes the exclusive lock on `fd` without waiting: true when this process now holds it (also when
   * it held it already through this open file), false when another open file of the same file holds it
   * (another process, or another open of it in this one).
   * @throws FlockError with the errno when flock fails otherwise (a file system that has no locks:
   *   ENOLCK, EOPNOTSUPP, ENOSYS, which its `noLocks` tells; a bad descriptor: EBADF)
   */
  tryExclusive(fd: number): boolean;
}

let loaded: KernelLock | null | undefined;

/**
 * flock(2) from the C library, loaded once through bun:ffi's `dlopen`; undefined where it cannot be
 * loaded (Windows, a platform or C library not listed), where the caller falls back to a lock file
 * created exclusively.
 */
export function kernelLock(): KernelLock | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  loaded = null;
  const errnoSymbol = process.platform === "darwin" ? "__error" : "__errno_location";
  for (const name of libraries()) {
    try {
      const lib = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [errnoSymbol]: { args: [], returns: FFIType.ptr },
      });
      const flock = lib.symbols.flock as unknown as (fd: number, op: number) => number;
      const errnoAt = lib.symbols[errnoSymbol] as unknown as () => number | null; // the calling thread's errno
      const errno = () => {
        const at = errnoAt();
        return at ? read.i32(at, 0) : 0;
      };
      loaded = {
        tryExclusive(fd) {
          for (;;) {
            if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
            const e = errno(); // read at once: the call that failed set it on this thread
            if (e === EWOULDBLOCK) return false;
            if (e !== EINTR) throw new FlockError(e);
          }
        },
      };
      break;
    } catch {
      // not this name: try the next
    }
  }
  return loaded ?? undefined;
}
