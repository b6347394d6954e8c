/**
 * The command line's two outputs (SPEC 2.2): a line on stdout, or a line on stderr and the exit with a
 * code (1 for a failure, 2 for a usage error).
 */

/** Writes one line to stdout. */
export function out(line: string): void {
  process.stdout.write(line + "\n");
}

/** Writes one line to stderr and exits with `code` (default 1). */
export function fail(line: string, code = 1): never {
  process.stderr.write(line + "\n");
  process.exit(code);
}
