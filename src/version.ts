/** Version and build info (`switchyard version`). */
import pkg from "../package.json" with { type: "json" };

/** The switchyard version (package.json `version`), as `switchyard version` and the instance file report it. */
export const VERSION: string = pkg.version;

/** Build details: version, Bun version, platform. */
export function buildInfo(): { version: string; bun: string; platform: string; arch: string } {
  return { version: VERSION, bun: Bun.version, platform: process.platform, arch: process.arch };
}
