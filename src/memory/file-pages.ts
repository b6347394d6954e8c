/**
 * Gives back the resident clean pages of the executable's read-only mappings at the idle trim (issue 17,
 * Linux only): `madvise(MADV_DONTNEED)` through bun:ffi on each mapping of the executable file that
 * `/proc/self/smaps` shows as not writable, private, and holding no anonymous (copy-on-write) page.
 *
 * What this does and does not do: those pages are Bun's machine code (`r-xp`), its read-only data and
 * built-in modules (`r--p`) as read from the binary. They are clean copies of the file: dropping them
 * from this process's page tables makes its RSS fall, but they stay in the kernel's page cache
 * (reclaimable, shared with any other process mapping the file) and come back by a minor page fault the
 * next time the code runs. Nothing is lost and nothing is rewritten; the anonymous memory (JS heap,
 * allocator arena, JIT code) is not touched here at all.
 *
 * Why these mappings and no others:
 * - not writable: a writable private mapping (`.data`, `.bss`, the `.bun` section with our bundle) may
 *   hold pages the process wrote to; dropping them would revert them to the file's bytes;
 * - `Anonymous: 0 kB`: a read-only mapping can still hold copy-on-write pages made while it was
 *   writable, e.g. the RELRO segment (`.data.rel.ro`, `.got`) the dynamic loader relocated and then made
 *   read-only; dropping those would undo the relocations and crash the process. Such pages are what
 *   smaps counts as `Anonymous` in a file mapping. `Private_Dirty` is no guide: a binary written a
 *   moment ago shows its not yet written-back page-cache pages as dirty in every mapping, and those
 *   pages belong to the page cache, which keeps them;
 * - not locked (`Locked: 0 kB`): madvise refuses locked ranges;
 * - only the executable itself (`/proc/self/exe`): it holds ~46 of the ~50 MB file-backed RSS; the
 *   shared libraries (libc, libm, the loader: ~2 MB) are shared with every other process on the machine
 *   and their code runs on every system call, so it would be faulted back within the second (a figure
 *   that falls only to come back is not a gain).
 */
import { readFileSync, readlinkSync } from "node:fs";

/** One mapping of `/proc/PID/smaps` as far as {@link cleanFileMappings} needs it; sizes in kB. */
export interface SmapsMapping {
  /** First address (inclusive) and end (exclusive), as read from the header line. */
  start: bigint;
  end: bigint;
  /** `r-xp`, `rw-p`, … */
  perms: string;
  /** The file path, `[heap]`, `[stack]`, or "" for an anonymous mapping. */
  path: string;
  /** Resident pages, kB. */
  rss: number;
  /** Copy-on-write or anonymous pages in the mapping, kB (what a drop would lose); -1 when smaps has no `Anonymous` line. */
  anonymous: number;
  /** Locked (mlock) pages, kB. */
  locked: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/;
const FIELD = /^(Rss|Anonymous|Locked):\s+(\d+) kB/;

/** Parses the text of `/proc/PID/smaps` into its mappings (fields not listed in {@link SmapsMapping} are skipped). */
export function parseSmaps(text: string): SmapsMapping[] {
  const out: SmapsMapping[] = [];
  let cur: SmapsMapping | undefined;
  for (const line of text.split("\n")) {
    const h = HEADER.exec(line);
    if (h) {
      cur = { start: BigInt("0x" + h[1]), end: BigInt("0x" + h[2]), perms: h[3]!, path: h[4]!.trim(), rss: 0, anonymous: -1, locked: 0 };
      out.push(cur);
      continue;
    }
    const f = cur && FIELD.exec(line);
    if (!f || !cur) continue;
    const kb = Number(f[2]);
    if (f[1] === "Rss") cur.rss = kb;
    else if (f[1] === "Anonymous") cur.anonymous = kb;
    else cur.locked = kb;
  }
  return out;
}

/**
 * The mappings of `file` whose resident pages may be dropped safely: private, readable, not writable,
 * resident (Rss > 0), with `Anonymous: 0 kB` and nothing locked (module comment); `file` is an absolute
 * path (never `[vdso]` or another special mapping). A mapping whose entry
 * has no `Anonymous` line (parsed as -1) is never chosen: without it a relocated page cannot be told
 * from a clean one.
 */
export function cleanFileMappings(smaps: string, file: string): SmapsMapping[] {
  return parseSmaps(smaps).filter((m) => m.path === file && file.startsWith("/") && m.perms[0] === "r" && m.perms[1] !== "w" && m.perms[3] === "p" && m.rss > 0 && m.anonymous === 0 && m.locked === 0);
}

/** What one release did: mappings advised and the RSS they held before, kB (from smaps). */
export interface ReleaseResult {
  mappings: number;
  releasedKb: number;
}

/** `MADV_DONTNEED` on x86-64 and arm64 Linux (asm-generic/mman-common.h). */
const MADV_DONTNEED = 4;

type Madvise = (addr: bigint, length: bigint, advice: number) => number;
let madvise: Madvise | null | undefined;

/** libc's `madvise` through bun:ffi, or null where it is not there (not Linux, other CPU, no libc.so.6, no ffi). */
async function loadMadvise(): Promise<Madvise | null> {
  if (process.platform !== "linux" || (process.arch !== "x64" && process.arch !== "arm64")) return null;
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const libc = dlopen("libc.so.6", { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } });
    return (addr, length, advice) => libc.symbols.madvise(addr, length, advice) as number;
  } catch {
    return null;
  }
}

/**
 * Drops the executable's clean read-only pages from this process (module comment). Returns undefined
 * where it cannot run (not Linux, no madvise, no /proc); never throws. A mapping madvise refuses is
 * skipped. bun:ffi is loaded on the first call only.
 */
export async function releaseExecutablePages(): Promise<ReleaseResult | undefined> {
  if (madvise === undefined) madvise = await loadMadvise();
  if (!madvise) return undefined;
  try {
    const exe = readlinkSync("/proc/self/exe");
    const smaps = readFileSync("/proc/self/smaps", "utf8");
    const result: ReleaseResult = { mappings: 0, releasedKb: 0 };
    for (const m of cleanFileMappings(smaps, exe)) {
      if (madvise(m.start, m.end - m.start, MADV_DONTNEED) !== 0) continue;
      result.mappings++;
      result.releasedKb += m.rss;
    }
    return result;
  } catch {
    return undefined;
  }
}
